"""Drives `agent` with the real Claude Agent SDK (PyPI `claude-agent-sdk`) and prints what it
saw as one JSON object per scenario. Used by crates/agent-cli/tests/all/sdk.rs, which serves the
model on loopback and checks the JSON.

usage: drive.py SCENARIO AGENT_BINARY FOLDER
"""

import asyncio
import json
import os
import sys
import time

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    query,
)


def describe(message):
    """A message as plain data the Rust test can check."""
    if isinstance(message, SystemMessage):
        return {"kind": "system", "subtype": message.subtype, "data": message.data}
    if isinstance(message, AssistantMessage):
        blocks = []
        for b in message.content:
            if isinstance(b, TextBlock):
                blocks.append({"text": b.text})
            elif isinstance(b, ToolUseBlock):
                blocks.append({"tool_use": b.name, "id": b.id, "input": b.input})
        return {"kind": "assistant", "model": message.model, "blocks": blocks}
    if isinstance(message, UserMessage):
        blocks = []
        if isinstance(message.content, list):
            for b in message.content:
                if isinstance(b, ToolResultBlock):
                    blocks.append(
                        {"tool_result": b.tool_use_id, "content": b.content, "is_error": b.is_error}
                    )
        return {"kind": "user", "blocks": blocks}
    if isinstance(message, ResultMessage):
        return {
            "kind": "result",
            "subtype": message.subtype,
            "is_error": message.is_error,
            "num_turns": message.num_turns,
            "session_id": message.session_id,
            "result": message.result,
            "usage": message.usage,
            "total_cost_usd": message.total_cost_usd,
        }
    return {"kind": type(message).__name__}


def options(agent, folder, **kw):
    return ClaudeAgentOptions(cli_path=agent, cwd=folder, **kw)


async def query_with_callbacks(agent, folder):
    asked = []
    hooked = []

    async def can_use_tool(tool_name, tool_input, context):
        asked.append({"tool": tool_name, "input": tool_input, "tool_use_id": context.tool_use_id})
        if tool_name == "Write":
            changed = dict(tool_input)
            changed["content"] = "written as the callback said\n"
            return PermissionResultAllow(updated_input=changed)
        return PermissionResultDeny(message="not this one")

    async def pre_tool_use(hook_input, tool_use_id, context):
        hooked.append({"event": hook_input["hook_event_name"], "tool": hook_input["tool_name"],
                       "cwd": hook_input["cwd"], "input": hook_input["tool_input"]})
        return {}

    opts = options(
        agent,
        folder,
        can_use_tool=can_use_tool,
        hooks={"PreToolUse": [HookMatcher(matcher="Write|Edit", hooks=[pre_tool_use])]},
    )

    async def prompt():
        yield {"type": "user", "message": {"role": "user", "content": "write the notes"}}

    messages = [describe(m) async for m in query(prompt=prompt(), options=opts)]
    return {"messages": messages, "asked": asked, "hooked": hooked}


async def client_two_turns(agent, folder):
    turns = []
    async with ClaudeSDKClient(options=options(agent, folder)) as client:
        for text in ["first question", "second question"]:
            await client.query(text)
            turns.append([describe(m) async for m in client.receive_response()])
    return {"turns": turns}


async def interrupt(agent, folder):
    asked = asyncio.Event()

    async def can_use_tool(tool_name, tool_input, context):
        asked.set()
        await asyncio.sleep(60)
        return PermissionResultAllow(updated_input=tool_input)

    out = {}
    async with ClaudeSDKClient(options=options(agent, folder, can_use_tool=can_use_tool)) as client:
        await client.query("write something slowly")
        collected = []

        async def collect():
            async for m in client.receive_response():
                collected.append(describe(m))

        reader = asyncio.create_task(collect())
        await asyncio.wait_for(asked.wait(), 30)
        started = time.monotonic()
        await client.interrupt()
        await asyncio.wait_for(reader, 30)
        out["seconds_to_result"] = time.monotonic() - started
        out["interrupted"] = collected
        # The session stays ready for the next prompt.
        await client.query("and now?")
        out["after"] = [describe(m) async for m in client.receive_response()]
    return out


async def parse(agent, path):
    """Each line of `path` (an `agent run --output-format stream-json` stdout) through the
    SDK's own message parser; a line it refuses raises."""
    from claude_agent_sdk._internal.message_parser import parse_message

    parsed = []
    with open(path) as f:
        for line in f:
            if line.strip():
                message = parse_message(json.loads(line))
                parsed.append(describe(message) if message is not None else {"kind": "skipped"})
    return {"messages": parsed}


async def bench(agent, folder):
    """For crates/agent-cli/benches/sdk.rs: one session whose Write calls the SDK's
    can_use_tool callback allows, run with AGENT_SDK_TIMINGS so `agent` reports the round trip
    of each request on stderr. Each stdin line `N` runs prompts (the model answers each with
    several Writes, then a text) until N round trips are recorded, and prints the seconds the
    first N took in all.
    """
    timings = []

    def on_stderr(line):
        if line.startswith("agent-sdk-timings "):
            timings.extend(json.loads(line.split(" ", 1)[1]).get("can_use_tool", []))

    async def allow(tool_name, tool_input, context):
        return PermissionResultAllow(updated_input=tool_input)

    client = ClaudeSDKClient(
        options=options(
            agent,
            folder,
            can_use_tool=allow,
            stderr=on_stderr,
            env={"AGENT_SDK_TIMINGS": "1"},
        )
    )
    await client.connect()
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line.strip():
            break
        n = int(line)
        timings.clear()
        while len(timings) < n:
            await client.query("write")
            async for m in client.receive_response():
                if isinstance(m, ResultMessage) and m.is_error:
                    raise RuntimeError(f"a prompt failed: {m}")
            # The stderr reader may lag the result by a moment.
            for _ in range(100):
                if len(timings) >= n:
                    break
                await asyncio.sleep(0.001)
        print(sum(timings[:n]) / 1e6, flush=True)
    await client.disconnect()


async def main():
    scenario, agent, folder = sys.argv[1:4]
    if scenario == "parse":
        print(json.dumps(await parse(agent, folder)))
        return
    if scenario == "bench":
        await bench(agent, folder)
        return
    run = {"query": query_with_callbacks, "client": client_two_turns, "interrupt": interrupt}[scenario]
    result = await asyncio.wait_for(run(agent, folder), 120)
    print(json.dumps(result))


asyncio.run(main())
