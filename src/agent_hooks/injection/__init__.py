"""Message mechanics: deciding what a history looks like after a synthetic injection.

Pure: no I/O. Besides the seed's classes, this is the layer's API for the runtime above it: the
history index, the trust rules, call ids, and the hook context and templates.
"""

from agent_hooks.config.hooks import InjectionFrequency
from agent_hooks.injection._context import hook_context
from agent_hooks.injection._ids import (
    arguments_json,
    call_id_prefix,
    is_synthetic_call_id,
    make_call_id,
    prefixed_call_id,
    ttl_expiry,
)
from agent_hooks.injection._index import HistoryIndex, Placement, PrefixState
from agent_hooks.injection._pairs import SyntheticPair, build_pair, new_call_id
from agent_hooks.injection._staged import SYNTHETIC_PROBE_CALL_ID, StagedToolSyntheticInjector
from agent_hooks.injection._synthetic import SyntheticToolCallInjector
from agent_hooks.injection._templates import (
    TemplateError,
    condition_holds,
    is_templated,
    render_arguments,
)
from agent_hooks.injection._transformer import MessagesTransformer
from agent_hooks.injection._trust import SigningKeys, TrustRules, remove_unverified

__all__ = [
    "SYNTHETIC_PROBE_CALL_ID",
    "HistoryIndex",
    "InjectionFrequency",
    "MessagesTransformer",
    "Placement",
    "PrefixState",
    "SigningKeys",
    "StagedToolSyntheticInjector",
    "SyntheticPair",
    "SyntheticToolCallInjector",
    "TemplateError",
    "TrustRules",
    "arguments_json",
    "build_pair",
    "call_id_prefix",
    "condition_holds",
    "hook_context",
    "is_synthetic_call_id",
    "is_templated",
    "make_call_id",
    "new_call_id",
    "prefixed_call_id",
    "remove_unverified",
    "render_arguments",
    "ttl_expiry",
]
