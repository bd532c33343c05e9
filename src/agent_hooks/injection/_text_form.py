"""A synthetic pair written as text: what a thinking model's current tool cycle gets instead.

With thinking on, Anthropic requires the last assistant message of the current tool cycle to
start with the model's own signed thinking block, which only the model can make; a synthetic
``tool_use`` there is refused. A pair the hooks place in that cycle is therefore forwarded as
one text block of the user message it would follow (SPEC 15). Pure: the text only; where the
block goes is the dialect's business.
"""

from __future__ import annotations

__all__ = ["tool_result_text"]

_CLOSE = "</tool_result>"
_ESCAPED_CLOSE = "<\\/tool_result>"


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
