"""The hooks runtime: one runner per app, one run per request (SPEC section 8).

Importing it installs the engine the seed's injectors run through (``agent_hooks.injection`` sits
below this layer and cannot import it), so every seam takes the one decision path.
"""

from agent_hooks.injection._synthetic import install_injector_engine
from agent_hooks.runtime._injectors import RunnerInjectorEngine
from agent_hooks.runtime._prepared import PreparedHook, prepare_hooks
from agent_hooks.runtime._records import (
    FAILED_OUTCOMES,
    HookFailedError,
    HookObserver,
    HookOutcome,
    HookRun,
    HookRunRecord,
)
from agent_hooks.runtime._runner import HookRunner

install_injector_engine(RunnerInjectorEngine())

__all__ = [
    "FAILED_OUTCOMES",
    "HookFailedError",
    "HookObserver",
    "HookOutcome",
    "HookRun",
    "HookRunRecord",
    "HookRunner",
    "PreparedHook",
    "prepare_hooks",
]
