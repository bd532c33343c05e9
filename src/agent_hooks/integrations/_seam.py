"""What every adapter does at its framework's seams, written once.

The seams contain failures: an adapter never fails its framework's run, except with
:class:`~agent_hooks.HookFailedError` from a hook with ``on_error: fail``, which comes out of
the framework's call. Anything else that goes wrong there (a message that does not convert, a
host's ``request`` callable that raises, a store) is one WARNING line and the run goes on as
if the seam had not been there.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from agent_hooks import HookEvent, HookFailedError, HookRunner
from agent_hooks._reasons import reason_for
from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.messages import Message, Role

__all__ = [
    "completion_facts",
    "contained",
    "field_of",
    "present",
    "run_completion",
    "turn_counts",
]

logger = logging.getLogger("agent_hooks.integrations")


@contextmanager
def contained(framework: str, seam: str) -> Iterator[None]:
    """Lets :class:`HookFailedError` out; logs anything else and swallows it.

    The caller keeps its unchanged result as the value to return when the block is cut short.
    """
    try:
        yield
    except HookFailedError:
        raise
    except Exception as exc:  # the seam: the framework's run must go on
        logger.warning(
            "framework=%s seam=%s outcome=skipped reason=%s", framework, seam, reason_for(exc)
        )
        logger.debug("framework=%s seam=%s failure detail", framework, seam, exc_info=True)


async def run_completion(
    runner: HookRunner,
    messages: list[Message],
    request: Mapping[str, Any] | None,
    facts: Mapping[str, int],
) -> None:
    """The ``on_completion`` hooks on ``messages`` (which end with the final answer).

    Raises:
        HookFailedError: a hook with ``on_error: fail`` failed.
    """
    await runner.run(HookEvent.ON_COMPLETION, messages, request=request, completion=facts)


def completion_facts(iterations: int | None, tool_calls: int | None) -> dict[str, int]:
    """The run's model calls and tool results where the framework counts them, else 1 and 0."""
    return {"iteration_count": iterations or 1, "total_tool_calls": tool_calls or 0}


def field_of(source: Any, name: str) -> Any:
    """``source.name`` or ``source[name]``; ``None`` when it has neither (or is ``None``)."""
    if source is None:
        return None
    if isinstance(source, Mapping):
        return source.get(name)
    return getattr(source, name, None)


def present(**values: Any) -> dict[str, Any]:
    """The hooks' ``request`` from the values that are there (absent ones left out)."""
    return {key: value for key, value in values.items() if value is not None and value != ""}


def turn_counts(messages: Sequence[Message]) -> tuple[int, int]:
    """Model calls (assistant messages) and tool results since the last user message, the
    hooks' own pairs left out: for frameworks that count neither but whose history shows both."""
    last_user = max((i for i, m in enumerate(messages) if m.role is Role.USER), default=-1)
    turn = messages[last_user + 1 :]
    model_calls = sum(
        1
        for m in turn
        if m.role is Role.ASSISTANT
        and not any(is_synthetic_call_id(call.id) for call in m.tool_calls or [])
    )
    tool_results = sum(
        1 for m in turn if m.role is Role.TOOL and not is_synthetic_call_id(m.tool_call_id)
    )
    return model_calls, tool_results
