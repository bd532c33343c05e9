"""Message mechanics: deciding what a history looks like after a synthetic injection.

Pure: no I/O. The public names are the seed's seam; the decision core the runtime above uses
(call ids, trust rules, the history index, pairs, the hook context and templates) is imported
from this package's private modules.
"""

from agent_hooks.config.hooks import InjectionFrequency
from agent_hooks.injection._staged import StagedToolSyntheticInjector
from agent_hooks.injection._synthetic import SyntheticToolCallInjector
from agent_hooks.injection._transformer import MessagesTransformer

__all__ = [
    "InjectionFrequency",
    "MessagesTransformer",
    "StagedToolSyntheticInjector",
    "SyntheticToolCallInjector",
]
