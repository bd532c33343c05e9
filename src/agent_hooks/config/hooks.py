"""Hook declarations: what a manifest author writes under ``hooks``.

Both unions are discriminated on ``kind`` so a new hook or refresh variant is a new class added to
the union, never a flag patched into an existing one.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from agent_hooks._toolnames import sanitize_toolname
from agent_hooks.config._base import JsonInt, JsonNumber, StrictModel, require_in_schema
from agent_hooks.config._events import HookEvent
from agent_hooks.config.diagnostics._template_checks import (
    TemplateProblem,
    context_names,
    is_templated,
    template_problems,
)

__all__ = [
    "DEFAULT_MAX_CONTENT_CHARS",
    "DEFAULT_TIMEOUT_SECONDS",
    "MAX_TTL_MINUTES",
    "HookConfig",
    "HookEvent",
    "InjectionFrequency",
    "RefreshConditionConfig",
    "TTLRefreshCondition",
    "ToolCallHookConfig",
]


class InjectionFrequency(StrEnum):
    """How often a hook adds its synthetic pair to the history: ``always`` on every request, or
    ``append_if_changed`` only when the content changed."""

    ALWAYS = "always"
    """Call the tool and append a new pair at the end on every request."""

    APPEND_IF_CHANGED = "append_if_changed"
    """Call the tool; refresh the latest pair in place when the content is unchanged, append a
    new one when it changed."""


DEFAULT_TIMEOUT_SECONDS: dict[HookEvent, float] = {
    HookEvent.ON_REQUEST_START: 15.0,
    HookEvent.ON_COMPLETION: 30.0,
}
"""A hook's deadline when it gives no ``timeout_seconds``: a request waits for request-start
hooks, so they get less time than completion hooks, which run after the answer."""

DEFAULT_MAX_CONTENT_CHARS = 20_000
"""Longest tool result injected as is; longer ones are cut with a marker."""

MAX_TTL_MINUTES = 100 * 365 * 24 * 60
"""A sanity cap (100 years): a longer TTL is a mistake; expiries in ids are clamped to 2106."""


class TTLRefreshCondition(StrictModel):
    """Reuse the latest result until it is ``ttl_minutes`` old; the tool is not called meanwhile."""

    model_config = ConfigDict(json_schema_extra=require_in_schema("kind"))

    kind: Literal["ttl"] = "ttl"
    """Discriminator: a time-to-live."""

    ttl_minutes: JsonInt = Field(gt=0, le=MAX_TTL_MINUTES, examples=[60])
    """Minutes a result stays fresh: greater than 0, at most 100 years (52560000)."""


RefreshConditionConfig = Annotated[TTLRefreshCondition, Field(discriminator="kind")]
"""When a hook may skip its tool call because an earlier result is still fresh."""


class _BaseHookConfig(StrictModel):
    event: HookEvent = Field(examples=["on_request_start"])
    """The seam where the hook fires: ``on_request_start`` (its result is injected into the
    history) or ``on_completion`` (runs after the final answer; nothing is injected)."""

    name: str | None = Field(default=None, min_length=1, examples=["user-memories"])
    """A label for logs and diagnostics; unique within the manifest when given."""


class ToolCallHookConfig(_BaseHookConfig):
    """Run a tool and put its result into the history as a synthetic tool-call pair."""

    model_config = ConfigDict(json_schema_extra=require_in_schema("kind"))

    kind: Literal["tool_call"] = "tool_call"
    """Discriminator: a hook that calls a tool."""

    toolset_name: str | None = Field(default=None, min_length=1, examples=["memory_server"])
    """The toolset of an ``mcp`` or ``rest-api`` tool. Omit it for ``deployment`` and
    ``internal`` tools, whose names are used verbatim."""

    tool_name: str = Field(min_length=1, examples=["get_memories"])
    """The tool's name in its toolset, or its final function name when ``toolset_name`` is
    omitted."""

    arguments: dict[str, Any] = Field(
        default_factory=dict,
        examples=[{"user_id": "current"}, {"query": "${last_user_message.content}"}],
    )
    """Arguments for the tool, a JSON-e template over the hook context (``${...}``, ``$eval``,
    ``$if``, ``$let``...; ``$${`` is a literal ``${``); the rendered arguments are shown to the
    model in the synthetic call."""

    frequency: InjectionFrequency = Field(
        default=InjectionFrequency.APPEND_IF_CHANGED, examples=["always"]
    )
    """``always`` appends a new pair on every request; ``append_if_changed`` refreshes the latest
    pair in place while the content is unchanged and appends only new content. Only for
    ``on_request_start`` hooks."""

    refresh_condition: RefreshConditionConfig | None = Field(
        default=None, examples=[{"kind": "ttl", "ttl_minutes": 60}]
    )
    """When set, the tool is not called while the latest result is fresh; ``null`` calls it on
    every request. Only for ``on_request_start`` hooks whose arguments are not templated."""

    timeout_seconds: JsonNumber | None = Field(default=None, gt=0, examples=[5])
    """Longest time the hook may take, everything included (starting its toolset's session, the
    call, enrichment); then it is abandoned. Greater than 0; 15 for ``on_request_start`` and 30
    for ``on_completion`` when omitted."""

    condition: str | None = Field(
        default=None, min_length=1, examples=["last_user_message != null"]
    )
    """A JSON-e expression over the hook context; when it is falsy (false, null, 0, "", [], {})
    the hook is skipped. Omit it to always run."""

    on_error: Literal["skip", "fail"] = Field(default="skip", examples=["fail"])
    """``skip`` (default): a failing hook logs a warning and the request goes on without it.
    ``fail``: the run raises ``HookFailedError`` once the other hooks finished."""

    max_content_chars: JsonInt = Field(default=DEFAULT_MAX_CONTENT_CHARS, gt=0, examples=[4000])
    """Longest tool result injected; a longer one is cut to this many characters and marked
    ``[truncated at N characters]``."""

    @field_validator("arguments")
    @classmethod
    def _check_argument_templates(
        cls, arguments: dict[str, Any], info: ValidationInfo
    ) -> dict[str, Any]:
        """Names and syntax are checked at load, as a broken template would fail every request."""
        problems = template_problems(arguments, context_names(info.data.get("event")))
        _raise_problems(arguments, problems)
        return arguments

    @field_validator("frequency", mode="before")
    @classmethod
    def _frequency_is_request_start_only(cls, frequency: Any, info: ValidationInfo) -> Any:
        """Completion hooks inject nothing, so a frequency there is a misunderstanding."""
        if info.data.get("event") == HookEvent.ON_COMPLETION:
            raise ValueError(
                "only on_request_start hooks take frequency (on_completion hooks inject nothing);"
                " remove it"
            )
        return frequency

    @field_validator("refresh_condition")
    @classmethod
    def _ttl_fits_the_hook(
        cls, refresh_condition: TTLRefreshCondition | None, info: ValidationInfo
    ) -> TTLRefreshCondition | None:
        """See :func:`refresh_condition_conflict`."""
        if refresh_condition is None:
            return None
        conflict = refresh_condition_conflict(info.data.get("event"), info.data.get("arguments"))
        if conflict is not None:
            raise ValueError(conflict)
        return refresh_condition

    @field_validator("condition")
    @classmethod
    def _check_condition(cls, condition: str | None, info: ValidationInfo) -> str | None:
        if condition is not None:
            names = context_names(info.data.get("event"))
            _raise_problems(condition, template_problems(condition, names, expression=True))
        return condition

    @model_validator(mode="before")
    @classmethod
    def _default_timeout_for_event(cls, data: Any) -> Any:
        """Fill in the event's default deadline, so ``timeout_seconds`` is always a number."""
        if isinstance(data, dict) and data.get("timeout_seconds") is None:
            try:
                event = HookEvent(str(data.get("event")))
            except ValueError:
                return data  # the event itself is reported as the error
            return {**data, "timeout_seconds": DEFAULT_TIMEOUT_SECONDS[event]}
        return data

    @property
    def deadline_seconds(self) -> float:
        """``timeout_seconds``, or the event's default when the model was built without it."""
        return self.timeout_seconds or DEFAULT_TIMEOUT_SECONDS[self.event]

    @property
    def final_tool_name(self) -> str:
        """The function name the model sees: prefixed by the toolset when one is named."""
        if self.toolset_name is None:
            return self.tool_name
        return sanitize_toolname(f"{self.toolset_name}_{self.tool_name}")


def refresh_condition_conflict(event: object, arguments: object) -> str | None:
    """Why a hook with this ``event`` and these ``arguments`` cannot have a refresh condition;
    ``None`` when it can.

    A TTL reuses the latest answer; that is wrong when nothing is injected, or when the question
    changes with each request (templated arguments). Also applied to the raw values of a manifest
    whose arguments did not validate (a broken template is still a template), so ``validate``
    reports both at once.
    """
    if event == HookEvent.ON_COMPLETION:
        return (
            "only on_request_start hooks take refresh_condition (on_completion hooks inject"
            " nothing); remove it"
        )
    if isinstance(arguments, Mapping) and is_templated(arguments):
        return (
            "a TTL cannot be used with templated arguments: it would reuse the answer to one"
            " request's arguments for another's; remove refresh_condition"
        )
    return None


def _raise_problems(value: object, problems: list[TemplateProblem]) -> None:
    """Report template problems at their own place inside the field being validated (pydantic
    puts the field's location in front: ``hooks[0].arguments`` + ``q``)."""
    if not problems:
        return
    errors = [
        InitErrorDetails(
            type=PydanticCustomError("template", problem.message),
            loc=problem.loc,
            input=value,
        )
        for problem in problems
    ]
    raise ValidationError.from_exception_data(ToolCallHookConfig.__name__, errors)


HookConfig = Annotated[ToolCallHookConfig, Field(discriminator="kind")]
"""Any hook a manifest may declare (discriminated on ``kind``)."""
