"""``python -m agent_hooks.serve MANIFEST [...]``: the serve command without the full CLI."""

from __future__ import annotations

import argparse
import logging
import sys

from agent_hooks.errors import ConfigError
from agent_hooks.serve._command import add_serve_parser, check_serve_args, run_serve


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m agent_hooks.serve")
    serve = add_serve_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["serve", *sys.argv[1:]])
    check_serve_args(serve, args)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        return run_serve(args)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # uvicorn re-raises Ctrl-C once it has shut down cleanly
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
