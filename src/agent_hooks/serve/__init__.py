"""``agent-hooks serve``: an OpenAI-compatible proxy that runs a manifest's hooks (SPEC 12).

Only the command's two entry points are public; importing them loads no web framework.
"""

from agent_hooks.serve._command import add_serve_parser, run_serve

__all__ = ["add_serve_parser", "run_serve"]
