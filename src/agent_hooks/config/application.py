"""The app manifest: toolsets plus the (preview) hooks that use them.

Loading goes in layers, each usable on its own: :meth:`ApplicationConfig.from_file` reads,
:meth:`~ApplicationConfig.from_bytes` decodes, :meth:`~ApplicationConfig.from_text` parses JSON,
:meth:`~ApplicationConfig.from_dict` validates. All of them raise
:class:`~agent_hooks.errors.ConfigError` whose issues name JSON paths.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic_core import InitErrorDetails

from agent_hooks.config._base import StrictModel, whole_float_to_int
from agent_hooks.config._preview import FeatureSettings, PreviewField, is_preview_field
from agent_hooks.config._schema import strip_preview_fields
from agent_hooks.config.diagnostics._jsontext import decode_json_text
from agent_hooks.config.diagnostics._references import (
    REFERENCE_ERROR_TYPE,
    raw_reference_errors,
    reference_errors,
)
from agent_hooks.config.diagnostics._validation_errors import issues_from_validation_error
from agent_hooks.config.hooks import HookConfig, refresh_condition_conflict
from agent_hooks.config.toolsets import ToolsetConfig
from agent_hooks.errors import ConfigError, ConfigIssue

__all__ = [
    "DEFAULT_HOOKS_MAX_CONCURRENCY",
    "PREVIEW_CONTEXT_KEY",
    "ApplicationConfig",
    "read_manifest",
]

logger = logging.getLogger("agent_hooks.config")

DEFAULT_HOOKS_MAX_CONCURRENCY = 8
"""How many hooks of one request run at once when the manifest does not say."""

PREVIEW_CONTEXT_KEY = "preview"
"""Validation-context key that overrides ``ENABLE_PREVIEW_FEATURES`` (``validate`` sets it)."""


class ApplicationConfig(StrictModel):
    """An agent-hooks app manifest: the toolsets that offer tools, and the hooks that call them."""

    model_config = ConfigDict(title="ApplicationConfig")

    schema_: str | None = Field(
        default=None,
        alias="$schema",
        examples=["./generated-app-schema.json"],
    )
    """URL or path of the published schema (``generated-app-schema.json``), so editors can
    complete and check the manifest. Ignored by validation."""

    toolsets: list[ToolsetConfig] = Field(
        default_factory=list,
        examples=[[{"type": "internal", "name": "clock", "tools": ["current_time"]}]],
    )
    """Where the tools live: MCP servers, REST APIs, model deployments, internal tools. Names
    must be unique."""

    hooks: list[HookConfig] | None = PreviewField(
        description=(
            "Config-driven hooks fired at named seams of request handling, in this order"
            " (preview: ignored unless ENABLE_PREVIEW_FEATURES is on)."
        ),
        examples=[
            [
                {
                    "kind": "tool_call",
                    "event": "on_request_start",
                    "toolset_name": "memory_server",
                    "tool_name": "get_memories",
                    "arguments": {"user_id": "current"},
                    "refresh_condition": {"kind": "ttl", "ttl_minutes": 60},
                }
            ]
        ],
    )

    # The bound sits inside the Annotated: outside it, pydantic writes ``ge`` (not ``minimum``)
    # into the schema of an optional integer with a before-validator.
    hooks_max_concurrency: (
        Annotated[int, Field(strict=True, ge=1), BeforeValidator(whole_float_to_int)] | None
    ) = PreviewField(
        description=(
            "How many hooks of one request run at once (at least 1; 8 when absent or null);"
            " 1 runs them one after another. Results are applied in manifest order either way."
        ),
        examples=[4],
    )

    @property
    def max_concurrency(self) -> int:
        """``hooks_max_concurrency``, or its default of 8."""
        return self.hooks_max_concurrency or DEFAULT_HOOKS_MAX_CONCURRENCY

    @model_validator(mode="before")
    @classmethod
    def _gate_preview_fields(cls, data: Any, info: ValidationInfo) -> Any:
        """With preview off, preview fields are dropped before anything looks at their value."""
        if not isinstance(data, Mapping) or _preview_enabled(info.context):
            return data
        gated = dict(data)
        for name in cls.preview_field_names():
            if gated.get(name) is not None:
                logger.warning(
                    "preview field %r ignored: set ENABLE_PREVIEW_FEATURES=true to use it", name
                )
                gated[name] = None
        return gated

    @model_validator(mode="after")
    def _check_references(self) -> ApplicationConfig:
        errors = reference_errors(self)
        if errors:
            raise ValidationError.from_exception_data(type(self).__name__, errors)
        return self

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The manifest schema as the current settings see it (no preview fields when off)."""
        schema = super().model_json_schema(*args, **kwargs)
        if FeatureSettings().enable_preview_features:
            return schema
        return strip_preview_fields(schema)

    @classmethod
    def preview_field_names(cls) -> tuple[str, ...]:
        return tuple(name for name, field in cls.model_fields.items() if is_preview_field(field))

    @classmethod
    def from_dict(
        cls, data: object, *, preview: bool | None = None, source: str | None = None
    ) -> ApplicationConfig:
        """Validate decoded JSON.

        Args:
            preview: override ``ENABLE_PREVIEW_FEATURES`` (``None`` reads the environment).

        Raises:
            ConfigError: the root is not an object, or any field is invalid.
        """
        if not isinstance(data, dict):
            kind = _json_type_name(data)
            raise ConfigError(
                [ConfigIssue("$", f"the manifest must be a JSON object, got {kind}")],
                source=source,
            )
        context = {PREVIEW_CONTEXT_KEY: preview} if preview is not None else None
        try:
            return cls.model_validate(data, context=context)
        except ValidationError as exc:
            raise ConfigError(_all_issues(exc, data, context), source=source) from exc

    @classmethod
    def from_text(
        cls, text: str, *, preview: bool | None = None, source: str | None = None
    ) -> ApplicationConfig:
        """Parse and validate JSON text.

        Raises:
            ConfigError: the text is not strict JSON (see :func:`decode_json_text`: no ``NaN``, no
                key repeated in one object), or the manifest is invalid.
        """
        data, repeated = decode_json_text(text, source=source)
        if not repeated:
            return cls.from_dict(data, preview=preview, source=source)
        try:  # the manifest's other errors belong in the same report (SPEC section 7)
            cls.from_dict(data, preview=preview, source=source)
        except ConfigError as exc:
            issues = sorted([*repeated, *exc.issues], key=_manifest_order)
            raise ConfigError(issues, source=source) from exc
        raise ConfigError(repeated, source=source)

    @classmethod
    def from_file(cls, path: str | Path, *, preview: bool | None = None) -> ApplicationConfig:
        """Read, parse and validate a manifest file.

        Raises:
            ConfigError: the file cannot be read or decoded, or the manifest is invalid.
        """
        return cls.from_bytes(read_manifest(path), preview=preview, source=str(path))

    @classmethod
    def from_bytes(
        cls, data: bytes, *, preview: bool | None = None, source: str | None = None
    ) -> ApplicationConfig:
        """Decode (UTF-8), parse and validate a manifest read with :func:`read_manifest`: a
        caller that validates one file twice (with and without preview features) reads it once,
        which a pipe such as ``<(...)`` needs.

        Raises:
            ConfigError: the bytes are not UTF-8, or as :meth:`from_text`.
        """
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(
                [ConfigIssue("$", f"file is not UTF-8 text (byte {exc.start})")], source=source
            ) from exc
        return cls.from_text(text, preview=preview, source=source)


def read_manifest(path: str | Path) -> bytes:
    """The manifest file's bytes.

    Raises:
        ConfigError: the file cannot be read (named by ``path``).
    """
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConfigError(
            [ConfigIssue("$", f"cannot read file: {reason}")], source=str(path)
        ) from exc


def _all_issues(
    exc: ValidationError, data: dict[str, Any], context: Mapping[str, Any] | None
) -> list[ConfigIssue]:
    """Every error of a manifest at once (SPEC section 7), in manifest order.

    pydantic reports shape and template errors together, but skips checks that need other
    fields to be valid: the cross-references (run only on a manifest whose fields all validated)
    and a hook's refresh condition against its arguments. When validation failed, those are
    checked here on the decoded data, so an author never fixes one error only to meet another.
    """
    issues = issues_from_validation_error(exc, data, ApplicationConfig)
    hooks = _preview_enabled(context)
    unchecked = _raw_refresh_conflicts(data) if hooks else []
    if not any(error["type"] == REFERENCE_ERROR_TYPE for error in exc.errors()):
        unchecked += raw_reference_errors(data, hooks=hooks)
    if unchecked:
        more = ValidationError.from_exception_data(ApplicationConfig.__name__, unchecked)
        seen = set(issues)
        issues += [
            issue
            for issue in issues_from_validation_error(more, data, ApplicationConfig)
            if issue not in seen
        ]
    return sorted(issues, key=_manifest_order)


def _raw_refresh_conflicts(data: Mapping[str, Any]) -> list[InitErrorDetails]:
    """:func:`refresh_condition_conflict` on the raw hooks. The model skips it when a hook's
    arguments or refresh condition did not validate (a broken template is still a template);
    where it did run, the caller drops the repeat."""
    raw_hooks = data.get("hooks")
    errors: list[InitErrorDetails] = []
    for index, hook in enumerate(raw_hooks if isinstance(raw_hooks, list) else []):
        if not isinstance(hook, Mapping) or hook.get("refresh_condition") is None:
            continue
        conflict = refresh_condition_conflict(hook.get("event"), hook.get("arguments"))
        if conflict is not None:
            errors.append(
                InitErrorDetails(
                    type="value_error",
                    loc=("hooks", index, "refresh_condition"),
                    input=hook["refresh_condition"],
                    ctx={"error": ValueError(conflict)},
                )
            )
    return errors


_SECTION_ORDER = {name: rank for rank, name in enumerate(ApplicationConfig.model_fields)}


def _manifest_order(issue: ConfigIssue) -> tuple[int, int]:
    """Issues by top-level field (the whole manifest first, then the model's field order) and
    element index; the sort is stable, so the issues of one element keep the order they were
    found in."""
    if issue.path == "$":
        return (-1, -1)
    section, _, rest = issue.path.partition("[")
    section = section.split(".", 1)[0]
    index = rest.split("]", 1)[0]
    return (
        _SECTION_ORDER.get(section, len(_SECTION_ORDER)),
        int(index) if index.isdigit() else -1,
    )


def _preview_enabled(context: Any) -> bool:
    if isinstance(context, Mapping) and context.get(PREVIEW_CONTEXT_KEY) is not None:
        return bool(context[PREVIEW_CONTEXT_KEY])
    return FeatureSettings().enable_preview_features


def _json_type_name(value: object) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    for python_type, name in names.items():
        if isinstance(value, python_type):
            return name
    return "a number" if isinstance(value, int | float) else type(value).__name__
