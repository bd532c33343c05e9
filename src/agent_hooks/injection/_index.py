"""One pass over a history, shared by every hook of a run, and one splice at the end.

Running H hooks one after another over N messages rescans the history per hook (O(N x H)). Here
the history is indexed once: the synthetic-looking pairs grouped by their "tool + arguments"
prefix, each with its caller, and the first-time insertion point. A hook's decision only looks at
the pairs of its own prefix (:class:`PrefixState`); the decisions are then spliced into the history
in one pass (:meth:`HistoryIndex.splice`). The result equals applying the hooks one after another
(SPEC section 4), because a hook only ever reads and writes pairs of its own prefix, and pairs
added by the run are ordered by the manifest index of the hook that added them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import NamedTuple

from agent_hooks.config.hooks import InjectionFrequency
from agent_hooks.injection._ids import ParsedCallId, is_synthetic_call_id, parse_call_id
from agent_hooks.injection._pairs import SyntheticPair, first_time_insert_index
from agent_hooks.injection._trust import SigningKeys, TrustRules, is_trusted
from agent_hooks.messages import FunctionCall, Message, Role, ToolCall

__all__ = ["Candidate", "HistoryIndex", "Placement", "PrefixState"]

_Position = tuple[int, int, int]
"""Where a pair sits, comparable across old and new pairs: ``(index, lane, hook)``. Old pairs are
``(i, 0, 0)``; pairs inserted before message ``p`` are ``(p, -1, hook)``; pairs appended at the
end are ``(N, 1, hook)``."""


class Placement(Enum):
    """What a decision does with its new pair."""

    INSERT = "insert"
    APPEND = "append"
    REPLACE = "replace"


class Candidate(NamedTuple):
    """A synthetic-looking pair of one prefix, as found in the history or added by this run."""

    position: _Position
    parsed: ParsedCallId
    content: object
    caller: FunctionCall | None
    """The function of the assistant call this pair's tool message answers (``None``: none)."""
    tool_index: int | None = None
    """Index of the tool message in the indexed history; ``None`` for a pair added by this run."""
    caller_index: int | None = None
    hook: int | None = None
    """Manifest index of the hook whose new pair holds this slot (``None``: an old pair)."""
    verified: bool = False
    """Its signature was already checked with the run's keys (:class:`HistoryIndex`)."""


@dataclass
class PrefixState:
    """The pairs of one prefix, oldest first; hooks sharing the prefix update it in turn."""

    candidates: list[Candidate] = field(default_factory=list)

    def latest_trusted(self, rules: TrustRules, keys: SigningKeys) -> Candidate | None:
        """The most recent pair that counts under ``rules``."""
        for candidate in reversed(self.candidates):
            if is_trusted(
                candidate.parsed,
                candidate.content,
                caller=candidate.caller,
                rules=rules,
                keys=keys,
                verified=candidate.verified,
            ):
                return candidate
        return None

    def is_fresh(self, rules: TrustRules, keys: SigningKeys) -> bool:
        """Whether the latest pair that counts still has a TTL in the future."""
        return self.fresh_until(rules, keys) is not None

    def fresh_until(self, rules: TrustRules, keys: SigningKeys) -> float | None:
        """When the latest pair that counts expires, if that is after ``rules.now``; else
        ``None`` (not fresh)."""
        latest = self.latest_trusted(rules, keys)
        expiry = latest.parsed.expiry if latest is not None else None
        return expiry if expiry is not None and rules.now < expiry else None

    def add(self, candidate: Candidate, replacing: Candidate | None = None) -> None:
        if replacing is not None:
            self.candidates[self.candidates.index(replacing)] = candidate
            return
        self.candidates.append(candidate)
        self.candidates.sort(key=lambda c: c.position)


class _Decision(NamedTuple):
    hook: int
    pair: SyntheticPair
    placement: Placement
    target: Candidate | None


class HistoryIndex:
    """The synthetic-looking pairs of a history, by prefix, and where first-time pairs go."""

    def __init__(self, messages: Sequence[Message], *, signatures_checked: bool = False) -> None:
        """``signatures_checked``: every synthetic-looking pair in ``messages`` verified with the
        keys the hooks will check them with (:func:`remove_unverified` kept only those), so their
        trust checks need not compute the HMAC again; pairs added later are checked as usual."""
        self.messages = tuple(messages)
        self._by_prefix: dict[str, list[Candidate]] = {}
        callers: dict[str, tuple[int, FunctionCall | None]] = {}
        # Ids already found synthetic, so the calls they answer are not matched again below.
        synthetic: set[str] = set()
        for index, message in enumerate(self.messages):
            if message.role is Role.ASSISTANT:
                for call in message.tool_calls or []:
                    callers[call.id] = (index, call.function)
            elif message.role is Role.TOOL:
                call_id = message.tool_call_id
                parsed = parse_call_id(call_id)
                if call_id is None or parsed is None:
                    continue
                synthetic.add(call_id)
                caller_index, function = callers.get(call_id, (None, None))
                self._by_prefix.setdefault(parsed.prefix, []).append(
                    Candidate(
                        position=(index, 0, 0),
                        parsed=parsed,
                        content=message.content,
                        caller=function,
                        tool_index=index,
                        caller_index=caller_index,
                        verified=signatures_checked,
                    )
                )
        self._synthetic = synthetic
        self._decisions: dict[int, _Decision] = {}
        self._fresh: dict[tuple[str, int | None, bool, SigningKeys], tuple[float, float]] = {}

    @cached_property
    def insert_at(self) -> int:
        """Where first-time pairs go; found only when a hook places one (a run whose hooks
        were all fresh never looks)."""
        synthetic = self._synthetic
        return first_time_insert_index(
            self.messages, lambda call_id: call_id in synthetic or is_synthetic_call_id(call_id)
        )

    def state(self, prefix: str) -> PrefixState:
        """A fresh working copy of the pairs of ``prefix`` (one per group of hooks)."""
        return PrefixState(list(self._by_prefix.get(prefix, ())))

    def fresh_until(self, prefix: str, rules: TrustRules, keys: SigningKeys) -> float | None:
        """:meth:`PrefixState.fresh_until` for the pairs of ``prefix`` as indexed (before any
        decision), remembered for as long as it holds: an index kept for many requests (the
        stored pairs of a conversation, turn after turn) decides each by a comparison.

        A pair fresh at ``now`` stays fresh until its expiry: a later ``now`` can only add
        pairs that count (the far-future check is the one rule that reads the clock), and each
        of those expires after the pair that counted before, or it would have counted then.
        """
        key = (prefix, rules.ttl_seconds, rules.check_content, keys)
        since, until = self._fresh.get(key, (0.0, 0.0))
        if since <= rules.now < until:
            return until
        expiry = PrefixState(self._by_prefix.get(prefix, [])).fresh_until(rules, keys)
        if expiry is not None:
            self._fresh[key] = (rules.now, expiry)
        return expiry

    def place(
        self,
        state: PrefixState,
        *,
        hook: int,
        pair: SyntheticPair,
        frequency: InjectionFrequency,
        rules: TrustRules,
        keys: SigningKeys,
    ) -> Placement:
        """Decide where ``pair`` goes by SPEC section 4, record it, and say where.

        ``always`` appends; ``append_if_changed`` inserts a first pair after the first user
        message, replaces the latest pair that counts when its content is the same, and
        appends otherwise.
        """
        if frequency is InjectionFrequency.ALWAYS:
            self.decide(state, hook=hook, pair=pair, placement=Placement.APPEND)
            return Placement.APPEND
        latest = state.latest_trusted(rules, keys)
        if latest is None:
            placement = Placement.INSERT
        elif latest.content == pair.tool.content:
            placement = Placement.REPLACE
        else:
            placement = Placement.APPEND
        self.decide(state, hook=hook, pair=pair, placement=placement, target=latest)
        return placement

    def decide(
        self,
        state: PrefixState,
        *,
        hook: int,
        pair: SyntheticPair,
        placement: Placement,
        target: Candidate | None = None,
    ) -> None:
        """Record that ``hook`` places ``pair``, and make it visible to later hooks of the prefix.

        Raises:
            ValueError: a pair whose call id is not synthetic.
        """
        call_id = pair.tool.tool_call_id
        parsed = parse_call_id(call_id)
        if parsed is None:
            raise ValueError(f"not a synthetic call id: {call_id!r}")
        end = len(self.messages)
        if placement is Placement.REPLACE:
            if target is None:
                raise ValueError("replacing needs the pair to replace")
            # Same slot, same owner: a later splice puts the new pair where the old one was.
            added = target._replace(
                parsed=parsed, content=pair.tool.content, caller=pair.function, verified=False
            )
        else:
            if placement is Placement.INSERT and self.insert_at < end:
                position = (self.insert_at, -1, hook)
            else:
                position = (end, 1, hook)
            added = Candidate(position, parsed, pair.tool.content, pair.function, hook=hook)
        state.add(added, replacing=target)
        self._decisions[hook] = _Decision(hook, pair, placement, target)

    def splice(self) -> list[Message]:
        """The history with every recorded decision applied, in one pass."""
        if not self._decisions:
            return list(self.messages)
        new_pairs: dict[int, SyntheticPair] = {}
        replaced_tools: dict[int, Message] = {}
        replaced_calls: dict[int, dict[str, ToolCall]] = {}
        for hook in sorted(self._decisions):
            decision = self._decisions[hook]
            target = decision.target
            if decision.placement is not Placement.REPLACE:
                new_pairs[hook] = decision.pair
            elif target is not None and target.hook is not None:
                new_pairs[target.hook] = decision.pair  # a pair of this run, refreshed in place
            elif target is not None and target.tool_index is not None:
                old_id = self.messages[target.tool_index].tool_call_id or ""
                replaced_tools[target.tool_index] = decision.pair.tool
                if target.caller_index is not None and decision.pair.assistant.tool_calls:
                    calls = replaced_calls.setdefault(target.caller_index, {})
                    calls[old_id] = decision.pair.assistant.tool_calls[0]
        inserted, appended = self._lanes(new_pairs)
        history = list(self.messages)  # replacements keep every index; new pairs go in last
        for index, tool in replaced_tools.items():
            history[index] = tool
        for index, updates in replaced_calls.items():
            message = history[index]
            refreshed = [updates.get(call.id, call) for call in message.tool_calls or []]
            history[index] = message.model_copy(update={"tool_calls": refreshed})
        history[self.insert_at : self.insert_at] = _flatten(inserted)
        history.extend(_flatten(appended))
        return history

    def _lanes(
        self, new_pairs: dict[int, SyntheticPair]
    ) -> tuple[list[SyntheticPair], list[SyntheticPair]]:
        """New pairs before ``insert_at`` and at the end, each in manifest order."""
        end = len(self.messages)
        inserted: list[SyntheticPair] = []
        appended: list[SyntheticPair] = []
        for hook in sorted(new_pairs):
            lane = self._decisions[hook].placement  # the owner's: INSERT or APPEND
            if lane is Placement.INSERT and self.insert_at < end:
                inserted.append(new_pairs[hook])
            else:
                appended.append(new_pairs[hook])
        return inserted, appended


def _flatten(pairs: list[SyntheticPair]) -> list[Message]:
    return [message for pair in pairs for message in (pair.assistant, pair.tool)]
