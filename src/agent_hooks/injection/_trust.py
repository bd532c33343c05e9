"""Whether a synthetic-looking pair in a history may be believed (SPEC section 9).

Histories usually come from clients, so a pair that looks like ours is only a claim. A pair counts
(for TTL freshness and as "the most recent pair") when its tool message answers an earlier
assistant call with the same id, its expiry is not further away than the hook's own TTL allows,
its content still hashes to the id's content segment (for ``append_if_changed``), its id matches
the synthetic pattern whole, and, with a signing key, its HMAC verifies. The HMAC covers the id,
the function name, the canonical arguments and the content, so a pair relabelled as another call
does not verify. With a key, pairs that fail the signature are removed from the history
altogether, since the model would otherwise read them as tool output. Without a key a signed id
cannot be checked, so it never counts.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from agent_hooks.injection._ids import (
    ParsedCallId,
    content_hash,
    is_synthetic_call_id,
    parse_call_id,
)
from agent_hooks.messages import FunctionCall, Message, Role, ToolCall

__all__ = [
    "SigningKeys",
    "TrustRules",
    "canonical_arguments",
    "is_trusted",
    "remove_unverified",
    "text_of",
    "with_calls",
]

_SIGNATURE_HEX_DIGITS = 10


@dataclass(frozen=True)
class SigningKeys:
    """HMAC keys: the first signs, every one verifies. No keys: ids are not signed."""

    keys: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.keys)

    def sign(self, call_id: str, function: FunctionCall, content: str) -> str:
        """``call_id`` with ``_s{sig}`` appended; unchanged when there is no key."""
        if not self.keys:
            return call_id
        canonical = canonical_arguments(function.arguments)
        if canonical is None:
            raise ValueError("a synthetic call's arguments must be the JSON text of an object")
        return f"{call_id}_s{_signature(self.keys[0], call_id, function.name, canonical, content)}"

    def verifies(self, parsed: ParsedCallId, function: FunctionCall | None, content: str) -> bool:
        """Whether some key produced the id's signature for this call and content."""
        signature = parsed.signature
        if signature is None or function is None:
            return False
        canonical = canonical_arguments(function.arguments)
        if canonical is None:
            return False
        return any(
            hmac.compare_digest(
                signature, _signature(key, parsed.unsigned, function.name, canonical, content)
            )
            for key in self.keys
        )


def canonical_arguments(arguments: str) -> str | None:
    """``json.dumps(json.loads(arguments), sort_keys=True)``; ``None`` when not a JSON object or
    when an object in it repeats a key.

    A framework that keeps the arguments as a dict and writes them back with other spacing or key
    order still verifies; a changed value does not. A repeated key is refused (SPEC 16): readers
    disagree on which of ``{"q": "a", "q": "b"}``'s values counts (``json`` keeps the last, others
    the first or both), so the text a tool or model reads could differ from what was signed.
    """
    try:
        parsed = json.loads(arguments, object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError):
        return None
    return _SORTED_KEYS.encode(parsed) if isinstance(parsed, dict) else None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("a JSON object repeats a key")
    return obj


_SORTED_KEYS = json.JSONEncoder(sort_keys=True)
"""``json.dumps(..., sort_keys=True)`` without building an encoder on every call (each pair
signed or verified canonicalises its arguments)."""


def _signature(key: str, unsigned_id: str, name: str, arguments: str, content: str) -> str:
    message = f"{unsigned_id}\n{name}\n{arguments}\n{content}".encode()
    digest = hmac.digest(key.encode("utf-8"), message, "sha256")  # hmac.new's one-shot fast path
    return digest.hex()[:_SIGNATURE_HEX_DIGITS]


class TrustRules(NamedTuple):
    """What one hook requires of a pair before it counts."""

    now: float
    ttl_seconds: int | None = None
    """With a TTL, an expiry beyond ``now + ttl + 60`` is a forgery and does not count (the
    minute of slack covers clock skew between replicas)."""
    check_content: bool = False
    """``append_if_changed`` compares content, so the content must match its hash."""


def text_of(content: object) -> str | None:
    """A tool message's text; ``None`` for anything else (multimodal parts are never ours)."""
    return content if isinstance(content, str) else None


def is_trusted(
    parsed: ParsedCallId,
    content: object,
    *,
    caller: FunctionCall | None,
    rules: TrustRules,
    keys: SigningKeys,
    verified: bool = False,
) -> bool:
    """Whether a pair counts for a hook with ``rules``.

    ``caller`` is the function of the earlier assistant ``tool_calls`` entry with the pair's id
    (``None``: the tool message answers nothing before it, so it is not a pair at all).
    ``verified``: :func:`remove_unverified` already found this pair's signature good with
    ``keys`` (for this caller and content), so the HMAC is not computed again.
    """
    if caller is None:
        return False
    text = text_of(content)
    ttl = rules.ttl_seconds
    if ttl is not None and parsed.expiry is not None and parsed.expiry > rules.now + ttl + 60:
        return False  # a forged far-future expiry: not stamped by a hook with this TTL
    if rules.check_content and (text is None or content_hash(text) != parsed.content_hash):
        return False
    if not keys:
        return parsed.signature is None  # a signature nobody here can check proves nothing
    return text is not None and (verified or keys.verifies(parsed, caller, text))


def remove_unverified(messages: Sequence[Message], keys: SigningKeys) -> tuple[list[Message], int]:
    """The history without synthetic-looking pairs whose signature does not verify, and how many
    pairs (distinct call ids) were removed. Ordinary messages are never removed; an assistant
    message goes only when nothing is left in it.

    A synthetic id that more than one assistant call carries (in one message or several, before
    or after its answer) does not verify either (SPEC 16): which call the signature covers would
    depend on the reader, and a copy could carry other arguments past a check of the first.
    """
    if not keys:
        return list(messages), 0
    callers: dict[str, FunctionCall | None] = {}
    verified: set[str] = set()
    rejected: set[str] = set()
    for message in messages:
        for call in message.tool_calls or [] if message.role is Role.ASSISTANT else []:
            if not is_synthetic_call_id(call.id):
                continue
            if call.id in callers:
                rejected.add(call.id)  # a signed id answers one call; a second one is a forgery
            callers[call.id] = call.function  # the latest call before its answer
        call_id = message.tool_call_id
        if message.role is not Role.TOOL or call_id is None or not is_synthetic_call_id(call_id):
            continue
        parsed = parse_call_id(call_id)
        text = text_of(message.content)
        caller = callers.get(call_id)
        if parsed is not None and text is not None and keys.verifies(parsed, caller, text):
            verified.add(call_id)
        else:
            rejected.add(call_id)
    verified -= rejected  # a call reusing the id may come after its answer
    rejected.update(call_id for call_id in callers if call_id not in verified)
    if not rejected:
        return list(messages), 0
    kept: list[Message] = []
    for message in messages:
        if message.role is Role.TOOL and message.tool_call_id in rejected:
            continue
        calls = message.tool_calls
        if calls and any(call.id in rejected for call in calls):
            remaining = [call for call in calls if call.id not in rejected]
            if not remaining and not message.content:
                continue
            message = with_calls(message, remaining)
        kept.append(message)
    return kept, len(rejected)


def with_calls(message: Message, calls: list[ToolCall]) -> Message:
    """``message`` with only ``calls``; without the key when none is left (not a ``null``)."""
    if calls:
        return message.model_copy(update={"tool_calls": calls})
    fields = message.to_openai()
    del fields["tool_calls"]
    return Message.model_validate(fields)
