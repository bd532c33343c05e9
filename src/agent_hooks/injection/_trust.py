"""Whether a synthetic-looking pair in a history may be believed (SPEC section 9).

Histories usually come from clients, so a pair that looks like ours is only a claim. A pair counts
(for TTL freshness and as "the most recent pair") when its tool message answers an earlier
assistant call with the same id, its expiry is not further away than the hook's own TTL allows,
its content still hashes to the id's ``_c_`` segment (for ``append_if_changed``), its id fits in 64
characters, and, with a signing key, its HMAC verifies. With a key, pairs that fail the signature
are removed from the history altogether, since the model would otherwise read them as tool output.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass

from agent_hooks.injection._ids import ParsedCallId, h6, is_synthetic_call_id, parse_call_id
from agent_hooks.messages import Message, Role, ToolCall

__all__ = [
    "SigningKeys",
    "TrustRules",
    "is_trusted",
    "remove_unverified",
    "text_of",
]

_SIGNATURE_HEX_DIGITS = 12


@dataclass(frozen=True)
class SigningKeys:
    """HMAC keys: the first signs, every one verifies. No keys: ids are not signed."""

    keys: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.keys)

    def sign(self, call_id: str, content: str) -> str:
        """``call_id`` with ``_s_{sig}`` appended; unchanged when there is no key."""
        if not self.keys:
            return call_id
        return f"{call_id}_s_{_signature(self.keys[0], call_id, content)}"

    def verifies(self, parsed: ParsedCallId, content: str) -> bool:
        """Whether some key produced the id's signature for this content."""
        signature = parsed.signature
        if signature is None:
            return False
        return any(
            hmac.compare_digest(signature, _signature(key, parsed.unsigned, content))
            for key in self.keys
        )


def _signature(key: str, unsigned_id: str, content: str) -> str:
    message = f"{unsigned_id}\n{content}".encode()
    digest = hmac.new(key.encode("utf-8"), message, hashlib.sha256).hexdigest()
    return digest[:_SIGNATURE_HEX_DIGITS]


@dataclass(frozen=True)
class TrustRules:
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
    has_caller: bool,
    rules: TrustRules,
    keys: SigningKeys,
) -> bool:
    """Whether a pair with this id, tool content and caller counts for a hook with ``rules``."""
    if not has_caller:
        return False
    text = text_of(content)
    ttl = rules.ttl_seconds
    if ttl is not None and parsed.expiry is not None and parsed.expiry > rules.now + ttl + 60:
        return False  # a forged far-future expiry: not stamped by a hook with this TTL
    if rules.check_content and (text is None or h6(text) != parsed.content_hash):
        return False
    return not keys or (text is not None and keys.verifies(parsed, text))


def remove_unverified(messages: Sequence[Message], keys: SigningKeys) -> tuple[list[Message], int]:
    """The history without synthetic-looking pairs whose signature does not verify, and how many
    pairs (distinct call ids) were removed. Ordinary messages are never removed; an assistant
    message goes only when nothing is left in it.
    """
    if not keys:
        return list(messages), 0
    verified: set[str] = set()
    rejected: set[str] = set()
    for message in messages:
        call_id = message.tool_call_id
        if message.role is not Role.TOOL or not is_synthetic_call_id(call_id):
            continue
        assert call_id is not None
        parsed = parse_call_id(call_id)
        text = text_of(message.content)
        if parsed is not None and text is not None and keys.verifies(parsed, text):
            verified.add(call_id)
        else:
            rejected.add(call_id)
    for message in messages:  # synthetic calls nobody answered cannot verify either
        for call in message.tool_calls or []:
            if is_synthetic_call_id(call.id) and call.id not in verified:
                rejected.add(call.id)
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
            message = _with_calls(message, remaining)
        kept.append(message)
    return kept, len(rejected)


def _with_calls(message: Message, calls: list[ToolCall]) -> Message:
    """``message`` with only ``calls``; without the key when none is left (not a ``null``)."""
    if calls:
        return message.model_copy(update={"tool_calls": calls})
    fields = message.to_openai()
    del fields["tool_calls"]
    return Message.model_validate(fields)
