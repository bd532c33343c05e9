"""The tokens an upstream answer says it used, by kind (SPEC 15, prompt caching).

``cached_input`` are cache reads, ``cache_write`` cache writes (Anthropic's), ``input`` the other
input tokens, ``output`` the answer's. OpenAI counts cached tokens inside its prompt (input)
tokens, Anthropic beside them; both are read here into the same four figures. A figure that is
missing, not a count or beyond belief is left out; nothing here ever raises.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = ["Usage", "anthropic_usage", "find_usage", "openai_usage"]

_MAX_TOKENS = 10**15
"""More than any answer uses; a larger figure is not counted (nor turned into a float that
overflows the counter)."""
_KEY = b'"usage"'
_TAIL_BYTES = 16 * 1024
"""How far from its end a JSON answer's ``usage`` is looked for: Chat Completions and Messages
write it last, the Responses API just before a few short fields."""
_VALUE_BYTES = 4 * 1024
"""How much after the key is decoded: a usage object is a few hundred bytes."""
_WHITESPACE = b" \t\r\n"
_DECODER = json.JSONDecoder()


class Usage(NamedTuple):
    """Token counts of one answer, by kind (the metric's ``kind`` label). A NamedTuple, not a
    frozen dataclass: one is built per answer, on the request path."""

    input: int = 0
    cached_input: int = 0
    cache_write: int = 0
    output: int = 0

    def kinds(self) -> zip[tuple[str, int]]:
        """``(kind, tokens)`` for each kind."""
        return zip(self._fields, self, strict=True)


def openai_usage(usage: Any) -> Usage | None:
    """Chat Completions' (``prompt_tokens``...) or the Responses API's (``input_tokens``...)
    usage; cached tokens are part of the prompt there, so ``input`` is the rest."""
    if not isinstance(usage, Mapping):
        return None
    prompt = _count(usage.get("prompt_tokens", usage.get("input_tokens")))
    details = usage.get("prompt_tokens_details", usage.get("input_tokens_details"))
    cached = _count(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    output = _count(usage.get("completion_tokens", usage.get("output_tokens")))
    return Usage(input=max(prompt - cached, 0), cached_input=cached, output=output)


def anthropic_usage(usage: Any) -> Usage | None:
    """Anthropic's usage: ``input_tokens`` are the uncached ones, cache reads and writes apart."""
    if not isinstance(usage, Mapping):
        return None
    return Usage(
        input=_count(usage.get("input_tokens")),
        cached_input=_count(usage.get("cache_read_input_tokens")),
        cache_write=_count(usage.get("cache_creation_input_tokens")),
        output=_count(usage.get("output_tokens")),
    )


def find_usage(raw: bytes) -> Any:
    """The value of the last ``"usage"`` key near the end of a JSON answer, without parsing the
    whole body (a large answer costs a search of its tail, not a parse); ``None`` when there is
    none or it cannot be read.

    Only a JSON string token can hold the bytes ``"usage"`` (inside a string its quotes would be
    escaped), and the one followed by ``:`` is a key: the answer's own usage, which comes after
    its content.
    """
    at = raw.rfind(_KEY, max(len(raw) - _TAIL_BYTES, 0))
    if at < 0:
        return None
    start = at + len(_KEY)
    tail = raw[start : start + _VALUE_BYTES].lstrip(_WHITESPACE)
    if not tail.startswith(b":"):
        return None
    text = tail[1:].decode("utf-8", "replace").lstrip()
    try:
        value, _ = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):
        return None
    return value


def _count(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_TOKENS:
        return value
    return 0
