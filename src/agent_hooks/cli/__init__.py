"""The ``agent-hooks`` command line: a thin shell over the library (SPEC section 7)."""

from agent_hooks.cli._main import main

__all__ = ["main"]
