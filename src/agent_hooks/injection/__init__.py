"""Message mechanics: deciding what a history looks like after a synthetic injection."""

from agent_hooks.config.hooks import InjectionFrequency
from agent_hooks.injection._ids import call_id_prefix, make_call_id, ttl_expiry
from agent_hooks.injection._staged import StagedToolSyntheticInjector
from agent_hooks.injection._synthetic import SyntheticToolCallInjector
from agent_hooks.injection._transformer import MessagesTransformer

__all__ = [
    "InjectionFrequency",
    "MessagesTransformer",
    "StagedToolSyntheticInjector",
    "SyntheticToolCallInjector",
    "call_id_prefix",
    "make_call_id",
    "ttl_expiry",
]
