"""The hooks runtime: one runner per app, one run per request (SPEC section 8).

The seed's injectors run through it too (``runtime._injectors``, found by ``agent_hooks.injection``
through the package root when an injector first runs), so every seam takes the one decision path.
"""

from agent_hooks.runtime._prepared import PreparedHook, prepare_hooks
from agent_hooks.runtime._records import (
    FAILED_OUTCOMES,
    HookFailedError,
    HookObserver,
    HookOutcome,
    HookRun,
    HookRunRecord,
)
from agent_hooks.runtime._runner import FreshRun, HookRunner

__all__ = [
    "FAILED_OUTCOMES",
    "FreshRun",
    "HookFailedError",
    "HookObserver",
    "HookOutcome",
    "HookRun",
    "HookRunRecord",
    "HookRunner",
    "PreparedHook",
    "prepare_hooks",
]
