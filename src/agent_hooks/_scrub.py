"""The one place that keeps secrets out of log lines and reasons (SPEC section 9).

Secrets are known only once resolved (an environment variable read at call time, a header value,
credentials in a URL), so whoever resolves one registers it here, and everything that writes text
for people (reasons, log lines, server stderr) passes it through :func:`scrub`. The registry is
process-wide on purpose: a value resolved by one toolset must not show up in a line logged by
another, or by the HTTP library underneath.

What is registered for a secret value:

- the whole value of a variable named by ``{"env": NAME}`` (SPEC section 9: every resolved
  secret), whatever its length; a literal manifest value only when it has at least
  :data:`MIN_WHOLE_CHARS` characters, since short literals are words and numbers common in
  ordinary text (a tenant ``acme``, a version ``2024``, ``true``) and scrubbing them would garble
  every log line while hiding nothing;
- each whitespace-separated part of at least :data:`MIN_PART_CHARS` characters, so the token of
  ``Bearer sk-...`` is hidden when a library quotes only the token;
- the forms each of those takes when quoted (:func:`_any_form`): percent-encoded, as in a
  logged URL, and JSON-escaped, as in an error body that quotes it (``/`` as ``\\/`` as PHP's
  ``json_encode`` writes it, ``+`` as ``\\u002B`` as .NET's does, hex digits in either case),
  each character in any of its forms, so a text that mixes them is matched too.

Tool results are a different audience: the model reads them, so only values that are secrets by
declaration (read through ``{"env": NAME}``, a header value written in a toolset, URL
credentials, the upstream key) are scrubbed from them, and only when they have at least
:data:`MIN_WHOLE_CHARS` characters (:func:`scrub_result`). A literal header counts (SPEC 16: a
key pasted into the manifest in clear is still a key), so a result quoting a literal ``Accept:
application/json`` shows ``***`` in its place; a literal child-process variable, or an API
version ``2`` read from the environment, does not erase those words from every answer.

Records reach handlers two ways, and a filter sees only one of them: filters on a *logger* run for
records logged on that very logger (not its children), filters on a *handler* run for every record
the handler emits. :func:`scrubbing_installed` therefore puts the filter on both; a host attaches
:func:`scrubbing_filter` to its own handlers.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qsl, unquote, urlsplit

from agent_hooks._log_filters import filter_added, handlers_reached

__all__ = [
    "MIN_PART_CHARS",
    "MIN_WHOLE_CHARS",
    "REPLACEMENT",
    "ScrubbingFilter",
    "register_secret",
    "register_url",
    "scrub",
    "scrub_http_library_logs",
    "scrub_result",
    "scrubbing_filter",
    "scrubbing_installed",
]

REPLACEMENT = "***"

MIN_WHOLE_CHARS = 6
"""A whole secret value shorter than this is not scrubbed (see the module docstring)."""

MIN_PART_CHARS = 8
"""A whitespace-separated part of a secret this long or longer is scrubbed on its own."""

_SECRET_QUERY_KEY = re.compile(r"token|key|secret|passw|pwd|sig|auth|credential", re.IGNORECASE)
"""Query parameters whose values are credentials (``api_key``, ``access_token``, ``sig``, ...)."""

_HTTP_LIBRARY_LOGGERS = tuple(
    f"{package}{suffix}"
    for package in ("httpx", "httpcore", "httpx2", "httpcore2")
    for suffix in ("", ".connection", ".http11", ".http2", ".proxy", ".socks")
)
"""Where httpx and httpcore (and the ``httpx2`` fork the MCP SDK uses) log: module loggers that
may quote a URL or a response header. A filter on a logger sees only records logged on it by
name, so each is listed."""


class _Registry:
    """A set of secrets and one pattern over them, longest first, so a secret containing another
    is replaced whole."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: set[str] = set()
        """The values registered."""
        self.pattern: re.Pattern[str] | None = None

    def add(self, candidates: set[str]) -> None:
        """Register ``candidates`` (in every quoted form); cheap when all are known already
        (every call resolves its secrets again, so the usual case is "nothing new")."""
        with self._lock:
            new = candidates - self._values
            if not new:
                return
            self._values.update(new)
            ordered = sorted(self._values, key=len, reverse=True)
            self.pattern = re.compile("|".join(map(_any_form, ordered)))

    def sub(self, text: str) -> str:
        pattern = self.pattern
        return text if pattern is None else pattern.sub(REPLACEMENT, text)


def _any_form(value: str) -> str:
    """A pattern matching ``value`` as a URL or a JSON text may quote it: each character as
    itself or, when an encoder may escape it (anything but an ASCII letter or digit), as its
    JSON escapes or its percent-encoded UTF-8 bytes, hex digits in either case."""
    return "".join(
        re.escape(char) if char.isascii() and char.isalnum() else _char_forms(char)
        for char in value
    )


def _char_forms(char: str) -> str:
    forms = [re.escape(char), re.escape(json.dumps(char, ensure_ascii=False)[1:-1])]  # \", \\
    units = char.encode("utf-16-be", "surrogatepass")
    forms.append(
        "".join(
            "\\\\u" + "".join(_either_case(digit) for digit in units[i : i + 2].hex())
            for i in range(0, len(units), 2)
        )
    )  # \uXXXX, a surrogate pair beyond the Basic Multilingual Plane
    utf8 = char.encode("utf-8", "surrogatepass")
    forms.append("".join("%" + "".join(map(_either_case, f"{b:02x}")) for b in utf8))
    if char == "/":
        forms.append(re.escape("\\/"))
    if char == " ":
        forms.append(re.escape("+"))
    return "(?:" + "|".join(dict.fromkeys(forms)) + ")"


def _either_case(digit: str) -> str:
    return f"[{digit}{digit.upper()}]" if digit.isalpha() else digit


_everything = _Registry()
"""Every secret and each long part of one: what logs and reasons are scrubbed of."""
_declared = _Registry()
"""Secrets by declaration only: what tool results are scrubbed of."""


def register_secret(value: str, *, always_whole: bool = False, in_results: bool = False) -> None:
    """Scrub ``value`` (and its long parts, see the module docstring) from now on.

    ``always_whole`` scrubs the whole value whatever its length: for values that are secrets by
    declaration (read from an ``{"env": NAME}`` reference), not literals that may be ordinary.
    Those are scrubbed from tool results too, and so is a value registered ``in_results`` (a
    literal header value of a toolset), when it has :data:`MIN_WHOLE_CHARS` characters.
    """
    whole = value and (always_whole or len(value) >= MIN_WHOLE_CHARS)
    candidates = {value} if whole else set()
    parts = {part for part in value.split() if len(part) >= MIN_PART_CHARS}
    candidates.update(parts)
    _everything.add(candidates)
    if always_whole or in_results:
        _declared.add({value} | parts if len(value) >= MIN_WHOLE_CHARS else parts)


def register_url(url: str) -> None:
    """Scrub the credentials written into ``url``: its userinfo and credential-like query values.

    Both the percent-encoded form (as written) and the decoded one (as sent) are registered, and
    the ``Basic`` token HTTP clients build from the userinfo (a server may echo that header).
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return  # not a URL: nothing in it can be told apart as a credential
    userinfo, at, _ = parts.netloc.rpartition("@")
    found = [userinfo, *userinfo.split(":", 1)] if at else []
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if _is_secret_key(k)]
    for value in found:
        register_secret(value, always_whole=True)
        register_secret(unquote(value), always_whole=True)
    if at:
        user, _, password = userinfo.partition(":")
        basic = f"{unquote(user)}:{unquote(password)}".encode()
        register_secret(base64.b64encode(basic).decode(), always_whole=True)


def _is_secret_key(key: str) -> bool:
    return _SECRET_QUERY_KEY.search(key) is not None


def scrub(text: str) -> str:
    """``text`` with every registered secret replaced by ``***``."""
    return _everything.sub(text)


def scrub_result(text: str) -> str:
    """A tool result with the secrets by declaration replaced by ``***`` (see the module
    docstring): what the model and the stored history may see."""
    return _declared.sub(text)


class ScrubbingFilter(logging.Filter):
    """Rewrites a record's message, traceback and stack text through :func:`scrub`.

    Records without secrets are left untouched (their ``msg`` template and ``args`` stay, so
    handlers that group by template keep working); it never drops a record.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if _everything.pattern is None:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: the handler reports it, a filter must not
            return True
        clean = scrub(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            # Formatters render the traceback after filters ran; render it now to scrub it.
            rendered = logging.Formatter().formatException(record.exc_info)
            if scrub(rendered) != rendered:
                record.exc_text = rendered
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


_FILTER = ScrubbingFilter()


def scrubbing_filter() -> ScrubbingFilter:
    """The filter to attach to a handler (``handler.addFilter(scrubbing_filter())``)."""
    return _FILTER


@contextmanager
def scrubbing_installed(logger: logging.Logger) -> Iterator[None]:
    """Scrub records logged on ``logger``, every record emitted by a handler it reaches, and every
    record the HTTP libraries log, until the block ends; then the filter comes off wherever the
    block put it (:func:`~agent_hooks._log_filters.filter_added`).

    Handlers added later, or records of child loggers that reach no handler known now, are not
    covered: attach :func:`scrubbing_filter` to those handlers.
    """
    targets = [logger, *handlers_reached(logger), *_http_library_loggers()]
    with filter_added(_FILTER, targets):
        yield


def scrub_http_library_logs() -> None:
    """Scrub every record the HTTP libraries log (URLs with credentials, echoed headers), whatever
    handler the host configured. Idempotent (a logger holds a filter once) and cheap: HTTP
    toolsets call it when built."""
    for each in _http_library_loggers():
        each.addFilter(_FILTER)


def _http_library_loggers() -> list[logging.Logger]:
    return [logging.getLogger(name) for name in _HTTP_LIBRARY_LOGGERS]
