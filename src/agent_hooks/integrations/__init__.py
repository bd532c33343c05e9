"""Adapters that run a manifest's hooks inside the agent frameworks (SPEC section 14).

One module per framework, each importing its framework only when imported itself, so this
package (and ``import agent_hooks``) never pulls a framework in:

- :mod:`agent_hooks.integrations.openai_agents`: ``AgentHooks`` (OpenAI Agents SDK)
- :mod:`agent_hooks.integrations.pydantic_ai`: ``AgentHooksCapability`` (Pydantic AI)
- :mod:`agent_hooks.integrations.langchain`: ``AgentHooksMiddleware`` (LangChain v1)
- :mod:`agent_hooks.integrations.litellm`: ``AgentHooksCallback`` (LiteLLM proxy)
- :mod:`agent_hooks.integrations.dial`: ``AgentHooksChatCompletion`` (DIAL)

Each takes the app's :class:`~agent_hooks.HookRunner`, converts the framework's messages to the
``Message`` history and back (messages the hooks leave alone come back as the very objects the
framework gave), runs ``on_request_start`` at the framework's model seam and ``on_completion``
at its end-of-run seam, and never fails the framework's run except with
:class:`~agent_hooks.HookFailedError` from a hook with ``on_error: fail``.
"""

__all__: list[str] = []
