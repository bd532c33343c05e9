"""The events hooks fire on: their own module, so the command line lists them (``run --event``)
without building the manifest models."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["HookEvent"]


class HookEvent(StrEnum):
    """The seam of the host's request handling where a hook fires: ``on_request_start`` (before
    the first model call of a request) or ``on_completion`` (after the final answer)."""

    ON_REQUEST_START = "on_request_start"
    """After the host's initialisers, before the first model call of a request."""

    ON_COMPLETION = "on_completion"
    """After the agent produced its final answer; results are not injected."""
