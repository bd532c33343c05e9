"""Model families: the rules a provider sets on the synthetic pairs it receives (SPEC 15).

The request's ``model`` (the name after its last ``/``, so ``openrouter/mistral-large`` is a
Mistral model) picks the family; ``serve --model-family GLOB=FAMILY`` rules are tried first, in
order. What a family changes is how a pair is *forwarded* (rendered), never the pair the hooks
see or the store keeps, which keep their ``ah_`` ids:

* ``gemini``: every synthetic tool call carries Google's documented thought signature for calls
  the model did not produce (Gemini 3 refuses a current-turn function call without one);
* ``mistral``: every synthetic id becomes a 9-character ``[0-9A-Za-z]`` alias (Mistral accepts no
  other id), the same every turn;
* ``anthropic`` and ``openai``: the pairs as the hooks wrote them.

Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import translate
from typing import Any, Literal, get_args

__all__ = [
    "FAMILIES",
    "GEMINI_EXTRA_CONTENT",
    "Family",
    "FamilyRule",
    "for_family",
    "mistral_alias",
    "model_family",
]

Family = Literal["anthropic", "gemini", "mistral", "openai"]
FAMILIES: tuple[Family, ...] = get_args(Family)

GEMINI_EXTRA_CONTENT: Mapping[str, Any] = {
    "google": {"thought_signature": "skip_thought_signature_validator"}
}
"""What a synthetic tool call carries for Gemini: the value Google documents for function calls
the model did not produce ("Thought signatures", ai.google.dev)."""

_BUILT_IN: tuple[tuple[tuple[str, ...], Family], ...] = (
    (("claude",), "anthropic"),
    (("gemini",), "gemini"),
    (("mistral", "codestral", "magistral", "ministral", "devstral", "pixtral"), "mistral"),
)
_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ALIAS_LENGTH = 9


@dataclass(frozen=True)
class FamilyRule:
    """``GLOB=FAMILY`` from ``--model-family``: model names matching ``glob`` (``fnmatch``,
    case-insensitive) are of ``family``."""

    glob: str
    family: Family
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_pattern", re.compile(translate(self.glob.lower())))

    @classmethod
    def parse(cls, text: str) -> FamilyRule:
        """Read ``GLOB=FAMILY``.

        Raises:
            ValueError: no ``=``, an empty glob, or a family that is not one of
                :data:`FAMILIES`; the message names the value and the choices.
        """
        glob, sep, family = text.rpartition("=")
        family = family.strip().lower()
        if not sep or not glob.strip():
            raise ValueError(f"expected GLOB=FAMILY, got {text!r}")
        for known in FAMILIES:
            if family == known:
                return cls(glob.strip(), known)
        choices = ", ".join(FAMILIES)
        raise ValueError(f"unknown model family {family!r} in {text!r}: choose one of {choices}")

    def matches(self, name: str) -> bool:
        """Whether ``name`` (already lowercased, without its ``provider/`` prefix) matches."""
        return self._pattern.match(name) is not None


def model_family(model: str | None, rules: Sequence[FamilyRule] = ()) -> Family:
    """The family of a request's ``model``: the first matching rule, else the built-in prefixes
    (``claude``, ``gemini``, Mistral's model names), else ``openai``."""
    if not model:
        return "openai"
    name = model.rpartition("/")[2].lower()
    for rule in rules:
        if rule.matches(name):
            return rule.family
    for prefixes, family in _BUILT_IN:
        if name.startswith(prefixes):
            return family
    return "openai"


def mistral_alias(call_id: str) -> str:
    """The 9-character id Mistral gets for ``call_id``: SHA-256 of its UTF-8 as a big-endian
    integer, in base 62 (``0-9A-Za-z``, most significant digit first), its first 9 digits."""
    number = int.from_bytes(hashlib.sha256(call_id.encode()).digest(), "big")
    digits: list[str] = []
    while number:
        number, digit = divmod(number, 62)
        digits.append(_DIGITS[digit])
    return "".join(reversed(digits))[:_ALIAS_LENGTH].rjust(_ALIAS_LENGTH, "0")


def for_family(message: Mapping[str, Any], family: Family) -> Mapping[str, Any]:
    """One half of a synthetic pair (an assistant message with one tool call, or its tool
    message, in Chat Completions form) as ``family`` must receive it; ``message`` itself when the
    family changes nothing. Never mutates ``message``."""
    if family == "mistral":
        if "tool_call_id" in message:
            return {**message, "tool_call_id": mistral_alias(message["tool_call_id"])}
        calls = [{**call, "id": mistral_alias(call["id"])} for call in message["tool_calls"]]
        return {**message, "tool_calls": calls}
    if family == "gemini" and message.get("tool_calls"):
        calls = [
            {**call, "extra_content": dict(GEMINI_EXTRA_CONTENT)} for call in message["tool_calls"]
        ]
        return {**message, "tool_calls": calls}
    return message
