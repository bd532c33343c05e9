"""Turns whose hooks are all fresh, decided from the stored pairs alone (SPEC 17's throughput).

In ``serve`` the only synthetic pairs of a history are the stored ones re-applied: the client's
are removed before anything reads it. So whether every request-start hook is TTL-fresh depends on
those pairs, not on the rest of the history (:meth:`~agent_hooks.HookRunner.fresh_records`). The
runner's index of them (:meth:`~agent_hooks.HookRunner.index_pairs`: their models, their
signatures checked) is kept per stored pairs, the very objects the store decoded, which it hands
out again as long as the stored text is unchanged: a conversation's fresh turn then validates no
model and builds no index, the steady state of a long conversation.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from itertools import pairwise
from typing import NamedTuple

from agent_hooks import HookRunner, HookRunRecord
from agent_hooks.injection._index import HistoryIndex
from agent_hooks.serve._dialects import validate_messages
from agent_hooks.serve._dialects._base import InvalidMessages
from agent_hooks.serve._generations import Generation
from agent_hooks.state._conversation import StoredPair

__all__ = ["FreshPairs"]

REMEMBERED_PAIRS = 1024
"""Stored pair lists whose index is kept (the least recently used forgotten first): two models
and a few small objects per pair."""


class _Indexed(NamedTuple):
    pairs: tuple[StoredPair, ...]
    """Held, so the ids in the key stay theirs while the entry lives."""
    runner: HookRunner
    """The runner whose keys checked the signatures (a reload brings another)."""
    pairs_index: HistoryIndex | None


class FreshPairs:
    """The runner's index of each list of re-applied stored pairs, by their identities."""

    def __init__(self, size: int = REMEMBERED_PAIRS) -> None:
        self._size = size
        self._indexed: OrderedDict[tuple[int, ...], _Indexed] = OrderedDict()

    def records(
        self, generation: Generation, kept: Sequence[StoredPair], *, held: bool
    ) -> list[HookRunRecord] | None:
        """The records of a run of ``generation``'s request-start hooks on a history whose only
        synthetic pairs are ``kept``, re-applied by
        :func:`~agent_hooks.state._conversation.reapply`; ``None`` unless every hook is fresh in
        them (then the hooks run as usual).

        The pairs must be in the history's order: they are when the upstream holds the earlier
        turns (``held``: all go first, in stored order) or when their anchors never decrease
        (each goes after its anchor, pairs of one anchor in stored order).
        """
        runner = generation.runner
        if runner is None or not kept or not (held or _in_anchor_order(kept)):
            return None
        key = tuple(map(id, kept))
        indexed = self._indexed.get(key)
        if indexed is None or indexed.runner is not runner:
            indexed = _Indexed(tuple(kept), runner, _index(runner, kept))
            self._indexed[key] = indexed
            if len(self._indexed) > self._size:
                self._indexed.popitem(last=False)
        else:
            self._indexed.move_to_end(key)
        if indexed.pairs_index is None:
            return None
        return runner.fresh_records(generation.start_hooks, indexed.pairs_index)


def _index(runner: HookRunner, kept: Sequence[StoredPair]) -> HistoryIndex | None:
    try:
        models = validate_messages([message for entry in kept for message in entry.pair])
    except InvalidMessages:
        return None  # the hooks' run says so, as it did before
    return runner.index_pairs(models)


def _in_anchor_order(kept: Sequence[StoredPair]) -> bool:
    anchors = [entry.anchor for entry in kept]
    if None in anchors:
        return False  # stored before anchors existed: placed by the first user message
    return all(a <= b for a, b in pairwise(anchors))  # type: ignore[operator]
