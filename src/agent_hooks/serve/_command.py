"""``agent-hooks serve``: its arguments and the function that runs the server until stopped.

Heavy imports (Starlette, uvicorn, redis) happen inside :func:`run_serve`, so registering the
subcommand keeps every other ``agent-hooks`` command fast.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import gc
import logging
import math
import os
import re
import signal
import socket
import sys
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from agent_hooks._log_filters import filter_added, handlers_reached
from agent_hooks._scrub import scrub, scrubbing_installed
from agent_hooks.serve._families import FamilyRule
from agent_hooks.serve._limits import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_INFLIGHT_BYTES

if TYPE_CHECKING:
    from starlette.types import ASGIApp

    from agent_hooks.serve._app import ServeSettings
    from agent_hooks.serve._workers import Worker

__all__ = ["UPSTREAM_API_KEY_ENV", "add_serve_parser", "check_serve_args", "run_serve"]

UPSTREAM_API_KEY_ENV = "AGENT_HOOKS_UPSTREAM_API_KEY"
DEFAULT_STATE_URL = "sqlite:///agent-hooks-state.db"

logger = logging.getLogger("agent_hooks.serve")


def add_serve_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Add ``serve`` to a CLI's subcommands and return its parser: once the arguments are
    parsed, :func:`check_serve_args` refuses options that contradict each other, then
    :func:`run_serve` runs them."""
    serve = commands.add_parser(
        "serve",
        help="an OpenAI-compatible proxy that runs the manifest's hooks",
        description="Serve /v1/chat/completions, /v1/responses and /v1/messages, running the"
        " manifest's hooks on every request.",
    )
    serve.add_argument("manifest", type=Path)
    serve.add_argument(
        "--upstream",
        metavar="URL",
        help="the model's base URL (requests go to URL/v1/chat/completions, URL/v1/responses,"
        " URL/v1/messages); without it an echo model lists the synthetic pairs it receives",
    )
    serve.add_argument(
        "--anthropic-upstream",
        metavar="URL",
        help="where /v1/messages goes instead (URL/v1/messages), e.g. https://api.anthropic.com",
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=_port, default=8080)
    serve.add_argument(
        "--state",
        default=DEFAULT_STATE_URL,
        metavar="URL",
        help="sqlite:///PATH (relative), sqlite:////ABS/PATH or redis://HOST:PORT/DB"
        f" (default {DEFAULT_STATE_URL})",
    )
    serve.add_argument(
        "--forward-auth",
        action="store_true",
        help="forward the client's Authorization/api-key headers (x-api-key and Authorization on"
        f" /v1/messages) instead of ${UPSTREAM_API_KEY_ENV}",
    )
    serve.add_argument(
        "--tenant-header",
        metavar="NAME",
        type=_header_name,
        help="the header that names who owns a conversation (set by a gateway in front);"
        " requests without it are refused with 401. Default: the client's credential",
    )
    serve.add_argument(
        "--upstream-timeout",
        type=_positive_seconds,
        default=600.0,
        metavar="SECONDS",
        help="answer 504 when the upstream is silent this long (default 600)",
    )
    serve.add_argument(
        "--max-body-bytes",
        type=_positive_int,
        default=DEFAULT_MAX_BODY_BYTES,
        metavar="BYTES",
        help="refuse larger request bodies with 413, reading no further (default 16 MiB)",
    )
    serve.add_argument(
        "--max-inflight-bytes",
        type=_positive_int,
        default=DEFAULT_MAX_INFLIGHT_BYTES,
        metavar="BYTES",
        help="answer 503 to a request whose body would take the bodies held at once past this;"
        " at least --max-body-bytes (default 256 MiB)",
    )
    serve.add_argument(
        "--max-connections",
        type=_positive_int,
        default=1000,
        metavar="N",
        help="answer 503 beyond this many connections at once (default 1000)",
    )
    serve.add_argument(
        "--model-family",
        action="append",
        default=[],
        type=_family_rule,
        metavar="GLOB=FAMILY",
        help="model names matching GLOB (fnmatch, case-insensitive, the name after its last /)"
        " follow FAMILY's rules for synthetic pairs: anthropic, gemini, mistral or openai;"
        " repeatable, first match wins, before the built-in claude*, gemini*, mistral*... rules",
    )
    serve.add_argument(
        "--watch",
        action="store_true",
        help="reload the manifest whenever the file changes (SIGHUP always reloads it)",
    )
    serve.add_argument(
        "--shutdown-timeout",
        type=_positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="on SIGTERM, wait this long for in-flight answers, then close them (default 30)",
    )
    serve.add_argument(
        "--workers",
        type=_positive_int,
        default=1,
        metavar="N",
        help="serve the port with N processes sharing the --state store (default 1)",
    )
    return serve


def check_serve_args(serve: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, as ``serve``'s usage error (exit 2), options each valid alone that cannot work
    together; argparse checks each option alone, as it comes, so this runs once all are parsed.

    Raises:
        SystemExit: from ``serve.error``: ``--max-inflight-bytes`` is below ``--max-body-bytes``
            (a body of an allowed size would alone pass the in-flight bound: always 503).
    """
    if args.max_inflight_bytes < args.max_body_bytes:
        serve.error(
            f"--max-inflight-bytes {args.max_inflight_bytes} is less than --max-body-bytes"
            f" {args.max_body_bytes}: a body of an allowed size could never be admitted;"
            " raise --max-inflight-bytes or lower --max-body-bytes"
        )


_GIL_SWITCH_SECONDS = 0.0005
"""How long a thread holding the GIL keeps it while another waits (Python's default: 5 ms)."""
_YOUNG_COLLECTION_EVERY = 10_000
"""Allocations between two collections of the youngest generation while serving (Python's
default is 700)."""


def run_serve(args: argparse.Namespace) -> int:
    """Serve until SIGTERM or Ctrl-C; in-flight requests and their completion hooks finish first.
    SIGHUP, and with ``--watch`` a change of the file, reloads the manifest (SPEC 17).

    The log filters serve needs are on while it runs and come off when it returns (SPEC 16: a
    host or a test may run it in-process, more than once): scrubbing on every handler the root
    logger reaches (ours, the libraries') and on the HTTP libraries' loggers, and one
    out-of-descriptors limiter on the root's handlers.

    Raises:
        ConfigError: the manifest does not validate, or asks for what the process cannot give.
    """
    with serve_logging():
        return _serve(args)


@contextlib.contextmanager
def serve_logging() -> Iterator[None]:
    """The log filters and levels :func:`run_serve` (and each ``--workers`` process) serves with."""
    from agent_hooks.serve._descriptors import OutOfDescriptorsFilter

    root = logging.getLogger()
    with (
        scrubbing_installed(root),
        filter_added(OutOfDescriptorsFilter(), handlers_reached(root)),
        filter_added(_FreshAtDebug(), [logging.getLogger(_HOOK_RECORDS_LOGGER)]),
        _info_logged(),
    ):
        yield


_HOOK_RECORDS_LOGGER = "agent_hooks.hooks"


class _FreshAtDebug(logging.Filter):
    """A hook's ``skipped_fresh`` record line is DEBUG in serve (SPEC 17): the access line
    already names the outcome, and at INFO it was written for every hook of every request of a
    long conversation (about 13% of a request's CPU with ``-v``). Other outcomes stay INFO."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "outcome", None) != "skipped_fresh":
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


@contextlib.contextmanager
def _info_logged() -> Iterator[None]:
    """serve's INFO lines (the start line, the access log: the server's output) are written
    whatever the CLI's verbosity; the logger's level is put back after."""
    serve_logger = logging.getLogger("agent_hooks.serve")
    previous_level = serve_logger.level
    if serve_logger.getEffectiveLevel() > logging.INFO:
        serve_logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        serve_logger.setLevel(previous_level)


def _log_start(listening: socket.socket, settings: ServeSettings, workers: int) -> None:
    """One line: where it listens, where requests go (hosts only, never credentials), the hooks
    it runs (and the processes serving, when more than one); and a warning when requests would
    reach a real upstream without a key."""
    host, port = listening.getsockname()[:2]
    address = f"[{host}]" if ":" in host else host
    upstream = _host_of(settings.upstream) if settings.upstream else "echo model"
    if settings.anthropic_upstream:
        upstream += f", /v1/messages to {_host_of(settings.anthropic_upstream)}"
    generation = settings.generations.current
    hooks = ", ".join(generation.hook_names) or "none"
    if generation.runner is None:
        hooks = "off (ENABLE_PREVIEW_FEATURES is not true)"
    processes = f" workers={workers}" if workers > 1 else ""
    logger.info(
        "listening on http://%s:%d upstream=%s hooks=%s%s",
        address,
        port,
        upstream,
        hooks,
        processes,
    )
    remote = settings.upstream or settings.anthropic_upstream
    if remote and not settings.upstream_api_key and not settings.forward_auth:
        logger.warning(
            "neither $%s nor --forward-auth is set: requests reach the upstream without a key",
            UPSTREAM_API_KEY_ENV,
        )


def _serve(args: argparse.Namespace, worker: Worker | None = None) -> int:
    """Check what serving needs (one ``error:`` line and exit 1 when it cannot start), then
    serve: in this process, or with ``--workers N`` in N processes this one supervises, each of
    which runs this again as ``worker`` (the socket comes from the parent)."""
    import uvicorn

    from agent_hooks.config import FeatureSettings
    from agent_hooks.serve._app import ServeSettings, create_app
    from agent_hooks.serve._metrics import Metrics
    from agent_hooks.serve._reload import Reloader
    from agent_hooks.state import open_store

    try:
        upstream = _base_url("--upstream", args.upstream)
        anthropic_upstream = _base_url("--anthropic-upstream", args.anthropic_upstream)
    except ValueError as exc:
        return startup_failed(str(exc), worker)
    hooks = FeatureSettings().enable_preview_features
    metrics = Metrics(summed_from=worker.metrics_dir if worker else None)
    # configuration errors surface now (exit 2), bad hooks too, whatever the preview gate says
    reloader = Reloader(
        args.manifest,
        hooks=hooks,
        on_reload=metrics.reload,
        watch=args.watch,
        fallback=worker.manifest if worker else None,
    )
    try:
        store = open_store(args.state, on_error=metrics.state_error)
    except (ValueError, OSError) as exc:
        return startup_failed(str(exc), worker)
    settings = ServeSettings(
        generations=reloader.generations,
        store=store,
        upstream=upstream,
        upstream_timeout_seconds=args.upstream_timeout,
        upstream_api_key=os.environ.get(UPSTREAM_API_KEY_ENV, "").strip() or None,
        forward_auth=args.forward_auth,
        tenant_header=args.tenant_header,
        max_body_bytes=args.max_body_bytes,
        max_inflight_bytes=args.max_inflight_bytes,
        metrics=metrics,
        anthropic_upstream=anthropic_upstream,
        model_families=tuple(args.model_family),
        reloader=reloader,
    )
    if worker is not None:
        listening = worker.listening
    else:
        try:
            listening = _listen(args.host, args.port)
        except OSError as exc:
            asyncio.run(store.aclose())
            return startup_failed(exc.strerror or str(exc))
        _log_start(listening, settings, args.workers)
        if args.workers > 1:
            # Checked here as one process would; each worker builds its own store, sessions and
            # clients (nothing holding a thread or a socket crosses to another process).
            asyncio.run(store.aclose())
            from agent_hooks.serve._workers import supervise

            base_urls = {"upstream": upstream, "anthropic_upstream": anthropic_upstream}
            return supervise(
                argparse.Namespace(**{**vars(args), **base_urls}), listening, reloader.first_read
            )
    app: ASGIApp = create_app(settings)
    server = uvicorn.Server(
        uvicorn.Config(
            app if worker is None else worker.announcing(app),
            host=args.host,
            port=args.port,
            log_config=None,
            access_log=False,  # ours names the hooks' outcomes; uvicorn's would repeat it
            timeout_graceful_shutdown=args.shutdown_timeout,
            # uvicorn counts the connection asking too: N+1 serves N at once and refuses the next
            limit_concurrency=args.max_connections + 1,
            lifespan="on",
        )
    )
    # uvicorn re-raises a SIGTERM once it has shut down gracefully, to whatever handler was
    # there before it: a no-op one makes the graceful stop an ordinary exit with status 0.
    previous_sigterm = _on_main_thread(signal.SIGTERM, lambda signum, frame: None)
    # SIGHUP would end the process; it asks for a reload instead, done on the event loop.
    previous_sighup = _on_main_thread(signal.SIGHUP, lambda signum, frame: reloader.request())
    # Everything built so far (modules, schemas, the app) lives as long as the process: the
    # collector need not scan it again in every full collection, which the objects of busy
    # requests trigger (32 clients at once: ~15% less CPU per request). A request allocates
    # thousands of objects (a 5,000-message body: tens of thousands), so young collections run
    # every 10,000 allocations instead of 700 (that body: ~20% less time).
    previous_thresholds = gc.get_threshold()
    # A large body is parsed and written in a worker thread (SPEC 16); each time the event loop
    # gives up the GIL (any socket call) it waits for the thread's turn to end to get it back,
    # 5 ms by default: a small request's few hand-offs added up to tens of milliseconds.
    previous_switch = sys.getswitchinterval()
    sys.setswitchinterval(_GIL_SWITCH_SECONDS)
    gc.freeze()
    gc.set_threshold(_YOUNG_COLLECTION_EVERY, *previous_thresholds[1:])
    try:
        server.run(sockets=[listening])
    except SystemExit as exc:  # uvicorn exits when it cannot bind; it logged why
        return exc.code if isinstance(exc.code, int) else 1
    finally:
        gc.set_threshold(*previous_thresholds)
        sys.setswitchinterval(previous_switch)
        gc.unfreeze()
        if previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)
        if previous_sighup is not None:
            signal.signal(signal.SIGHUP, previous_sighup)
    return 0 if server.started else 1


_SignalHandler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


def _on_main_thread(signum: signal.Signals, handler: _SignalHandler) -> _SignalHandler:
    """Install ``handler`` for ``signum``; the previous one, or ``None`` off the main thread
    (where signals cannot be handled, so nothing is installed)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signum, handler)


def _listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound here so a failure is one clear line, not uvicorn's traceback.

    Raises:
        OSError: the address cannot be bound; ``strerror`` says why, naming the address.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it. uvicorn serving a socket it did not bind leaves Nagle on,
    # and an answer's last small write then waits for the client's delayed ACK: about 40 ms
    # added to every request (bench_serve, one request at a time).
    listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        listening.bind((host, port))
    except OSError as exc:
        listening.close()
        why = "is already in use" if exc.errno == errno.EADDRINUSE else f"cannot be used: {exc}"
        raise OSError(exc.errno, f"{host}:{port} {why}") from exc
    listening.set_inheritable(True)
    return listening


def _base_url(option: str, value: str | None) -> str | None:
    """``value`` as the upstream's base URL: ``http(s)://host[:port][/path]``, a trailing ``/v1``
    left out (the proxy adds ``/v1/...`` itself; base URLs are usually written with it).

    Raises:
        ValueError: naming ``option``: not such a URL (the server would answer every request 502).
    """
    if value is None:
        return None
    try:
        parts = urllib.parse.urlsplit(value)
        port = parts.port  # raises for a port that is not a number or out of range
    except ValueError:
        parts, port = None, None
    if (
        parts is None
        or any(char.isspace() or not char.isprintable() for char in value)
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.query
        or parts.fragment
    ):
        shown = re.sub(r"//[^/@]*@", "//***@", value)  # a password in it is not echoed
        raise ValueError(f"{option} {shown!r} is not an http(s)://host[:port][/path] URL")
    del port
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
        stripped = urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))
        logger.info(
            "%s ends with /v1: using %s (the proxy adds /v1/... to it)",
            option,
            _without_credentials(stripped),
        )
        return stripped
    return value.rstrip("/")


def _without_credentials(url: str) -> str:
    """``url`` with any ``user:password@`` left out, for a log line."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((parts.scheme, _host_of(url), parts.path, "", ""))


def _host_of(url: str) -> str:
    """``host[:port]`` of ``url``, without credentials."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    return netloc if parts.port is None else f"{netloc}:{parts.port}"


def startup_failed(reason: str, worker: Worker | None = None) -> int:
    """What the server could not start with, as one line; exit status 1 (SPEC 12.1). A worker
    tells its parent instead, which writes the first such line of its workers."""
    if worker is not None:
        worker.failed(reason)
    else:
        print(f"error: {scrub(reason)}", file=sys.stderr)
    return 1


def _header_name(text: str) -> str:
    name = text.strip()
    if not name or not all(c.isascii() and (c.isalnum() or c in "-_") for c in name):
        raise argparse.ArgumentTypeError(f"not a header name: {text!r}")
    return name


def _family_rule(text: str) -> FamilyRule:
    try:
        return FamilyRule.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0-65535, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be seconds > 0, got {text!r}")
    return value
