"""What each framework adapter adds to a hook run: conversion both ways and its bookkeeping.

For every adapter, the same history (N messages in the framework's own types, one ordinary tool
call among them) goes through the adapter's model seam with one ``always`` hook around the
built-in ``current_time`` tool, so every call injects a pair and converts it back. The baseline
is ``runner.run`` on the same history already in ``Message`` form: the ratio is what the adapter
costs on top of the runner it wraps. A second baseline is the runner given OpenAI dicts (what a
host without a framework passes, and ``serve``): it pays the same ``Message`` validation the
adapters pay to build their history, which is most of their cost. Each adapter is called
through its real seam method (``before_model_request``, ``abefore_model``, ``input_filter``,
``async_pre_call_hook``, ``chat_completion`` around a do-nothing DIAL app); the table also gives
each adapter module's lines of code (non-blank lines, docstrings included) and those of the
modules they share.

Run it with ``python bench/bench_integrations.py`` (needs ``pip install -e '.[integrations]'``).
The machine is shared and noisy: compare ratios, not absolute times.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price list from the network

from agent_hooks import ClockModule, HookEvent, HookRunner, open_app
from agent_hooks.clock import FixedClock
from agent_hooks.config import ApplicationConfig
from agent_hooks.messages import Message

SRC = Path(__file__).resolve().parents[1] / "src" / "agent_hooks" / "integrations"
NOW = 1_900_000_000
SIZES = (20, 200)
BATCHES = 5
BATCH_SECONDS = 0.2
MANIFEST = {
    "toolsets": [{"type": "internal", "name": "host", "tools": ["current_time"]}],
    "hooks": [
        {
            "event": "on_request_start",
            "kind": "tool_call",
            "tool_name": "current_time",
            "frequency": "always",
        }
    ],
}

Call = Callable[[], Awaitable[Any]]


def history(size: int) -> list[dict[str, Any]]:
    """OpenAI-format turns: a system prompt, then user/assistant pairs, one with a tool call."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for turn in range((size - 3) // 2):
        messages.append({"role": "user", "content": f"question {turn} " * 8})
        messages.append({"role": "assistant", "content": f"answer {turn} " * 12})
    messages.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q": "tea"}'},
                }
            ],
        }
    )
    messages.append({"role": "tool", "tool_call_id": "call_1", "content": "tea notes"})
    return messages[:size]


def runner_alone(runner: HookRunner, messages: list[dict[str, Any]]) -> Call:
    parsed = [Message.model_validate(message) for message in messages]
    return lambda: runner.run(HookEvent.ON_REQUEST_START, parsed)


def runner_on_dicts(runner: HookRunner, messages: list[dict[str, Any]]) -> Call:
    return lambda: runner.run(HookEvent.ON_REQUEST_START, messages)


def pydantic_ai(runner: HookRunner, messages: list[dict[str, Any]]) -> Call:
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models import ModelRequestContext, ModelRequestParameters
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.tools import RunContext
    from pydantic_ai.usage import RunUsage

    from agent_hooks.integrations.pydantic_ai import AgentHooksCapability

    native: list[Any] = []
    for message in messages:
        role, content = message["role"], message.get("content")
        if role == "system":
            native.append(ModelRequest(parts=[SystemPromptPart(content)]))
        elif role == "user":
            native.append(ModelRequest(parts=[UserPromptPart(content)]))
        elif role == "tool":
            part = ToolReturnPart("lookup", content, tool_call_id=message["tool_call_id"])
            native.append(ModelRequest(parts=[part]))
        elif message.get("tool_calls"):
            call = message["tool_calls"][0]
            part = ToolCallPart("lookup", call["function"]["arguments"], tool_call_id=call["id"])
            native.append(ModelResponse(parts=[part]))
        else:
            native.append(ModelResponse(parts=[TextPart(content)]))
    capability = AgentHooksCapability(runner)
    model = TestModel()

    async def call() -> Any:
        ctx = RunContext(deps=None, model=model, usage=RunUsage(), messages=list(native))
        request = ModelRequestContext(
            model=model,
            messages=list(native),
            model_settings=None,
            model_request_parameters=ModelRequestParameters(),
        )
        return await capability.before_model_request(ctx, request)

    return call


def langchain(runner: HookRunner, messages: list[dict[str, Any]]) -> Call:
    from langchain_core.messages import convert_to_messages
    from langgraph.runtime import Runtime

    from agent_hooks.integrations.langchain import AgentHooksMiddleware

    native = convert_to_messages(messages)
    middleware = AgentHooksMiddleware(runner)
    runtime: Runtime[Any] = Runtime()
    return lambda: middleware.abefore_model({"messages": list(native)}, runtime)


def openai_agents(runner: HookRunner, messages: list[dict[str, Any]]) -> Call:
    from agents import Agent
    from agents.run_config import CallModelData, ModelInputData

    from agent_hooks.integrations.openai_agents import AgentHooks

    items: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "tool":
            output = message["content"]
            items.append({"type": "function_call_output", "call_id": "call_1", "output": output})
        elif message.get("tool_calls"):
            function = message["tool_calls"][0]["function"]
            items.append({"type": "function_call", "call_id": "call_1", **function})
        else:
            items.append({"role": message["role"], "content": message["content"]})
    hooks = AgentHooks(runner)
    agent: Agent[Any] = Agent(name="bench")

    def call() -> Awaitable[Any]:
        data = ModelInputData(input=list(items), instructions=None)
        return hooks.input_filter(CallModelData(model_data=data, agent=agent, context=None))

    return call


def litellm(runner: HookRunner, messages: list[dict[str, Any]]) -> Call:
    from litellm.proxy._types import UserAPIKeyAuth

    from agent_hooks.integrations.litellm import AgentHooksCallback

    callback = AgentHooksCallback(runner)
    key = UserAPIKeyAuth(token="bench")

    def call() -> Awaitable[Any]:
        data = {"model": "bench", "messages": list(messages), "litellm_call_id": "bench"}
        return callback.async_pre_call_hook(key, None, data, "acompletion")

    return call


def dial(runner: HookRunner, messages: list[dict[str, Any]]) -> Call:
    from aidial_sdk.chat_completion import ChatCompletion, Request, Response
    from starlette.requests import Request as HTTPRequest

    from agent_hooks.integrations.dial import AgentHooksChatCompletion

    class Silent(ChatCompletion):
        async def chat_completion(self, request: Request, response: Response) -> None:
            return None

    wrapper = AgentHooksChatCompletion(Silent(), runner)
    http = HTTPRequest({"type": "http", "method": "POST", "path": "/", "headers": []})
    request = Request(
        messages=messages,
        api_key="bench",
        deployment_id="bench",
        headers={},
        original_request=http,
    )

    sent = list(request.messages)

    def call() -> Awaitable[Any]:
        request.messages = list(sent)  # the adapter rewrites the request it is given
        return wrapper.chat_completion(request, Response(request))

    return call


ADAPTERS: dict[str, tuple[str, Callable[[HookRunner, list[dict[str, Any]]], Call]]] = {
    "openai_agents": ("openai_agents.py", openai_agents),
    "pydantic_ai": ("pydantic_ai.py", pydantic_ai),
    "langchain": ("langchain.py", langchain),
    "litellm": ("litellm.py", litellm),
    "dial": ("dial.py", dial),
}


async def seconds_per_call(call: Call) -> float:
    """The median over batches of the mean time of one call."""
    await call()  # warm-up: first-use imports and clients
    means = []
    for _ in range(BATCHES):
        count = 0
        started = time.perf_counter()
        while (elapsed := time.perf_counter() - started) < BATCH_SECONDS:
            await call()
            count += 1
        means.append(elapsed / count)
    return statistics.median(means)


def lines_of_code(name: str) -> int:
    return sum(1 for line in (SRC / name).read_text().splitlines() if line.strip())


async def main() -> None:
    config = ApplicationConfig.from_dict(MANIFEST, preview=True)
    shared = ["_history.py", "_seam.py", "_stored.py", "_loop.py"]
    print("shared modules:", ", ".join(f"{name} {lines_of_code(name)}" for name in shared))
    print(
        f"{'adapter':<14} {'LOC':>4} {'N':>5} {'runner us':>10} {'adapter us':>11} {'ratio':>7}"
        f" {'runner(dicts) us':>17} {'ratio':>7}"
    )
    async with open_app(config, [ClockModule(FixedClock(NOW))], preview=True) as injector:
        runner = injector.get(HookRunner)
        for size in SIZES:
            messages = history(size)
            baseline = await seconds_per_call(runner_alone(runner, messages))
            dicts = await seconds_per_call(runner_on_dicts(runner, messages))
            for name, (module, build) in ADAPTERS.items():
                adapter = await seconds_per_call(build(runner, messages))
                print(
                    f"{name:<14} {lines_of_code(module):>4} {size:>5} {baseline * 1e6:>10.1f}"
                    f" {adapter * 1e6:>11.1f} {adapter / baseline:>6.2f}x"
                    f" {dicts * 1e6:>17.1f} {adapter / dicts:>6.2f}x"
                )


if __name__ == "__main__":
    asyncio.run(main())
