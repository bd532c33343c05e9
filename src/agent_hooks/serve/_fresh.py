"""Turns whose hooks are all fresh, decided from the stored pairs alone (SPEC 17's throughput).

In ``serve`` the only synthetic pairs of a history are the stored ones re-applied: the client's
are removed before anything reads it. So whether every request-start hook is TTL-fresh depends on
those pairs, not on the rest of the history (:meth:`~agent_hooks.HookRunner.fresh_run`). The
runner's index of them (:meth:`~agent_hooks.HookRunner.index_pairs`: their models, their
signatures checked) is kept per stored pairs, the very objects the store decoded, which it hands
out again as long as it keeps that text decoded (a shared load): a conversation's fresh turn then
validates no model and builds no index, the steady state of a long conversation. A text the store
does not keep decoded comes as new objects every turn and is indexed every turn, as before.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from itertools import pairwise
from typing import NamedTuple

from agent_hooks import HookRunner, HookRunRecord
from agent_hooks.injection._index import HistoryIndex
from agent_hooks.runtime import FreshRun
from agent_hooks.serve._dialects import validate_messages
from agent_hooks.serve._dialects._base import InvalidMessages
from agent_hooks.serve._generations import Generation
from agent_hooks.state._conversation import StoredPair

__all__ = ["FreshPairs"]

INDEXED_BYTES = 8 * 1024 * 1024
"""About how much the kept indexes may hold (the least recently used forgotten first): the
store's decode budget, so both keep about the same conversations."""
_PAIR_BYTES = 2048
"""A pair's models and index entry, beside its content (counted by characters)."""


class _Indexed(NamedTuple):
    pairs: tuple[StoredPair, ...]
    """Held, so the ids in the key stay theirs while the entry lives."""
    pairs_index: HistoryIndex | None
    size: int
    in_anchor_order: bool
    last_run: FreshRun | None = None
    """The runner's last answer on these pairs, to be given again while it holds."""


class FreshPairs:
    """The runner's index of each list of re-applied stored pairs, by their identities, for the
    runner of the generation last asked (a reload's new runner starts afresh)."""

    def __init__(self, budget: int = INDEXED_BYTES) -> None:
        self._budget = budget
        self._runner: HookRunner | None = None
        self._indexed: OrderedDict[tuple[int, ...], _Indexed] = OrderedDict()
        self._size = 0

    def records(
        self, generation: Generation, kept: Sequence[StoredPair], *, held: bool
    ) -> Sequence[HookRunRecord] | None:
        """The records of a run of ``generation``'s request-start hooks on a history whose only
        synthetic pairs are ``kept``, re-applied by
        :func:`~agent_hooks.state._conversation.reapply`; ``None`` unless every hook is fresh in
        them (then the hooks run as usual).

        The pairs must be in the history's order: they are when the upstream holds the earlier
        turns (``held``: all go first, in stored order) or when their anchors never decrease
        (each goes after its anchor, pairs of one anchor in stored order). Either way the index
        is the same, so ``held`` is no part of the key.
        """
        runner = generation.runner
        if runner is None or not generation.decides_by_freshness or not kept:
            return None
        if runner is not self._runner:  # a reload: the old runner's keys and hooks go
            self._runner = runner
            self._indexed.clear()
            self._size = 0
        key = tuple(map(id, kept))
        indexed = self._indexed.get(key)
        if indexed is None:
            indexed = self._remember(key, kept, _index(runner, kept))
        else:
            self._indexed.move_to_end(key)
        if indexed.pairs_index is None or not (held or indexed.in_anchor_order):
            return None
        last = indexed.last_run
        run = runner.fresh_run(generation.start_hooks, indexed.pairs_index, last)
        if run is None:
            return None
        if run is not last and key in self._indexed:
            self._indexed[key] = indexed._replace(last_run=run)
        return run.records

    def _remember(
        self, key: tuple[int, ...], kept: Sequence[StoredPair], index: HistoryIndex | None
    ) -> _Indexed:
        size = sum(_PAIR_BYTES + len(str(entry.tool.get("content"))) for entry in kept)
        indexed = _Indexed(tuple(kept), index, size, _in_anchor_order(kept))
        if size <= self._budget:
            self._indexed[key] = indexed
            self._size += size
            while self._size > self._budget:
                self._size -= self._indexed.popitem(last=False)[1].size
        return indexed


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
