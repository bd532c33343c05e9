"""``agent-hooks serve``: an OpenAI-compatible proxy that runs a manifest's hooks (SPEC 12).

Only the command's entry points are public (its parser, the check of the parsed options, the
run); importing them loads no web framework.
"""

from agent_hooks.serve._command import add_serve_parser, check_serve_args, run_serve

__all__ = ["add_serve_parser", "check_serve_args", "run_serve"]
