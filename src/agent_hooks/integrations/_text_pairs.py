"""Pairs in text form inside a framework's own history (SPEC 15, Anthropic thinking).

With Anthropic thinking on, the last assistant message of the current tool cycle must start
with the model's own signed thinking block, so a synthetic ``tool_use`` there is refused. Where
the framework keeps the hooks' pairs in its own history (Pydantic AI, LangChain), a pair the
hooks place in the current cycle is written there as one text block of the user message it
follows, as ``serve`` forwards it, and it keeps that form on later turns: the history is the
store. On the next turn the adapter reads such a block back as the pair it stands for, so TTLs
and dedupe see it like any pair, and a TTL refresh writes it again in place, as text.

Which pairs take the text form is the conversation core's decision
(:func:`~agent_hooks.state._conversation.collect_pairs`), the same one ``serve`` makes: the form
of the pair a hook replaced in place, else text when anchored in the current cycle. Here the
"client messages" are the history the hooks were given.

The text form holds the call's name, id and content, not its arguments: without a signing key
nothing reads them; with one, the adapter keeps them beside the block where its framework has a
place the model never sees, else the pair does not verify and the hook runs afresh.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.injection._text_form import read_tool_result_text, tool_result_text
from agent_hooks.messages import FunctionCall, Message, Role, ToolCall
from agent_hooks.state._conversation import collect_pairs

__all__ = [
    "ARGUMENTS_KEY",
    "pair_from_text",
    "text_form_arguments",
    "text_form_calls",
    "text_of_pair",
]

ARGUMENTS_KEY = "agent_hooks_text_pair_arguments"
"""Where an adapter keeps the arguments of the text-form pairs of a message, in a field of it
the model never sees (call id to the JSON text of the arguments): a signed id covers them."""


def pair_from_text(text: str, arguments: str | None = None) -> tuple[Message, Message] | None:
    """The call and result messages a text-form block stands for; ``None`` for any other text
    (one that does not parse, or whose id is not synthetic: a user quoting the format)."""
    read = read_tool_result_text(text)
    if read is None or not is_synthetic_call_id(read[1]):
        return None
    name, call_id, content = read
    function = FunctionCall(name=name, arguments=arguments or "{}")
    call = Message(role=Role.ASSISTANT, tool_calls=[ToolCall(id=call_id, function=function)])
    return call, Message(role=Role.TOOL, tool_call_id=call_id, content=content)


def text_form_arguments(messages: Sequence[Message], text_form: Collection[str]) -> dict[str, str]:
    """The arguments of each call of ``text_form`` by call id: the text carries none, so the
    adapter keeps them beside it where the model never sees them (signatures cover them)."""
    return {
        call.id: call.function.arguments
        for message in messages
        for call in message.tool_calls or ()
        if call.function is not None and call.id in text_form
    }


def text_of_pair(result: Message, name: str) -> str:
    """The text-form block of the pair whose tool message is ``result``."""
    content = result.content if isinstance(result.content, str) else ""
    return tool_result_text(name, result.tool_call_id or "", content)


def text_form_calls(
    before: Sequence[Message],
    after: Sequence[Message],
    *,
    read_as_text: Collection[str],
    thinking: bool,
    afresh: bool = False,
) -> frozenset[str]:
    """The call ids of the pairs of ``after`` (the hooks' result on ``before``) to write in text
    form.

    ``read_as_text``: the call ids of ``before`` that were read from text-form blocks.
    ``thinking``: Anthropic thinking is on for this request, so a pair anchored in the current
    cycle (after the last user message of ``before``; everywhere without one) is text. Pairs the
    hooks did not touch keep the form they were read in; a pair that replaced a text-form pair of
    the same hook in place is text too, thinking or not.

    ``afresh``: the pairs read as tool calls are decided again, as if the hooks had just written
    them (for an adapter that learns whether the model thinks only after the hooks ran).
    """
    if not thinking and not read_as_text:
        return frozenset()
    item_of = {id(message): index for index, message in enumerate(before)}
    old = [
        entry._replace(form="text") if entry.call_id in read_as_text else entry
        for entry in collect_pairs(
            before,
            item_at=[item_of.get(id(message)) for message in before],
            items=before,
            reapplied=(),
            to_dict=_as_dict,
        )
        if entry.call_id in read_as_text or not afresh
    ]
    text_from = None
    if thinking:
        users = [index for index, message in enumerate(before) if message.role is Role.USER]
        text_from = users[-1] if users else -1
    new = collect_pairs(
        after,
        item_at=[item_of.get(id(message)) for message in after],
        items=before,
        reapplied=old,
        text_from=text_from,
        to_dict=_as_dict,
    )
    return frozenset(entry.call_id for entry in new if entry.form == "text")


def _as_dict(message: Any) -> dict[str, Any]:
    return message.to_openai() if isinstance(message, Message) else dict(message)
