"""A synthetic pair written as text: what a thinking model's current tool cycle gets instead.

With thinking on, Anthropic requires the last assistant message of the current tool cycle to
start with the model's own signed thinking block, which only the model can make; a synthetic
``tool_use`` there is refused. A pair the hooks place in that cycle is therefore forwarded as
one text block of the user message it would follow (SPEC 15). Pure: the text only; where the
block goes is the dialect's business.
"""

from __future__ import annotations

import re

__all__ = ["read_tool_result_text", "tool_result_text"]

_CLOSE = "</tool_result>"
_ESCAPED_CLOSE = "<\\/tool_result>"
_TEXT_FORM = re.compile(
    r'<tool_result tool="(?P<name>[^"\n]*)" id="(?P<id>[^"\n]*)">\n'
    r"(?P<content>.*)\n</tool_result>",
    re.DOTALL,
)


def tool_result_text(name: str, call_id: str, content: str) -> str:
    """The text of a pair in text form (SPEC 15), exactly::

        <tool_result tool="NAME" id="ID">
        CONTENT
        </tool_result>

    ``name`` is the pair's function name and ``call_id`` its call id (synthetic ids and tool
    names hold no quote); a ``</tool_result>`` inside ``content`` is written ``<\\/tool_result>``
    so the content cannot end the element early.
    """
    escaped = content.replace(_CLOSE, _ESCAPED_CLOSE)
    return f'<tool_result tool="{name}" id="{call_id}">\n{escaped}\n{_CLOSE}'


def read_tool_result_text(text: str) -> tuple[str, str, str] | None:
    """``(name, call_id, content)`` when ``text`` is exactly a pair in text form, else ``None``.

    The inverse of :func:`tool_result_text`, but for a content that held ``<\\/tool_result>``
    itself, which reads back as ``</tool_result>``.
    """
    match = _TEXT_FORM.fullmatch(text)
    if match is None or _CLOSE in match["content"]:
        return None
    return match["name"], match["id"], match["content"].replace(_ESCAPED_CLOSE, _CLOSE)
