"""Drives `toolwire gateway` with the official Python SDK's client (mcp 2.x, pinned in
requirements.txt), as a host would: the steps given in GATEWAY_STEPS (tool calls, with the
progress they report; resource reads; a whole result read back page by page through
read_result; a 2026-07-28 input-required round trip driven by hand, with a forged retry;
calls asked about and left unanswered, and one answered too late),
elicitations answered from GATEWAY_ANSWERS, one JSON line per step for the
Rust test (crates/toolwire/tests/gateway.rs). The same step language as
gateway_client.mjs, so the two SDKs are held to the same results.

    venv/bin/python gateway_client.py TOOLWIRE_BIN DATA_DIR HOST [GATEWAY ARGS...]
    GATEWAY_URL=http://127.0.0.1:PORT/mcp GATEWAY_TOKEN=... venv/bin/python gateway_client.py
        (--http, with the token of the gateway's data directory's gateway-token)

GATEWAY_CLIENT_NAME names the client (default gateway-python-host).

GATEWAY_MODE picks the revision: "auto" (the default: 2026-07-28, found by
server/discover) or "legacy" (the 2025-11-25 initialize handshake).
"""

import asyncio
import base64
import json
import os
import re
import sys

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

PAGE_NOTE = re.compile(r'"offset":(\d+)\}\]$')


def http_transport(url):
    """The streamable HTTP transport to the --http gateway at `url`, with its token."""
    headers = {"Authorization": f"Bearer {os.environ['GATEWAY_TOKEN']}"}
    return streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))


def out(value):
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def text_of(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


async def main():
    url = os.environ.get("GATEWAY_URL")
    toolwire, data, host, *gateway_args = sys.argv[1:] if not url else ("", "", "")
    steps = json.loads(os.environ.get("GATEWAY_STEPS", "[]"))
    answers = json.loads(os.environ.get("GATEWAY_ANSWERS", "[]"))
    asked = []
    last_link = None

    async def elicit(_context, params):
        asked.append(params.message)
        answer = answers.pop(0) if answers else {"action": "decline"}
        return types.ElicitResult.model_validate(answer)

    server = StdioServerParameters(
        command=toolwire,
        args=["gateway", "--host", host, *gateway_args],
        env={**os.environ, "TOOLWIRE_DATA_DIR": data},
    )
    client = Client(
        http_transport(url) if url else server,
        elicitation_callback=elicit if answers else None,
        client_info=types.Implementation(
            name=os.environ.get("GATEWAY_CLIENT_NAME", "gateway-python-host"), version="1.0.0"
        ),
        read_timeout_seconds=120,
        mode=os.environ.get("GATEWAY_MODE", "auto"),
    )
    async with client:
        out({"step": "protocol", "version": getattr(client.session, "protocol_version", None)})
        tools = await client.list_tools()
        out({"step": "list", "names": [t.name for t in tools.tools], "tools": [dump(t) for t in tools.tools]})
        for step in steps:
            try:
                if "read" in step:
                    # "last-link": the first resource link of the call before.
                    uri = last_link if step["read"] == "last-link" else step["read"]
                    read = await client.read_resource(uri)
                    contents = [
                        {
                            "uri": str(c.uri),
                            "mimeType": c.mime_type,
                            "blob": getattr(c, "blob", None),
                        }
                        for c in read.contents
                    ]
                    out({"step": "read", "contents": contents})
                elif "follow" in step:
                    await follow(client, step)
                elif "forge" in step:
                    await forge(client, step)
                elif "leave" in step:
                    await leave(client, step)
                else:
                    progress = []

                    async def on_progress(value, total, message, progress=progress):
                        progress.append({"progress": value, "total": total, "message": message})

                    result = await client.call_tool(step["tool"], step.get("args", {}), progress_callback=on_progress)
                    links = [str(b.uri) for b in result.content if b.type == "resource_link"]
                    last_link = links[0] if links else None
                    out({"step": "call", "tool": step["tool"], "result": dump(result), "asked": asked[:], "progress": progress})
                    asked.clear()
            except Exception as e:  # the step's failure is what the test checks
                out({"step": "error", "tool": step.get("tool"), "message": str(e)})


async def forge(client, step):
    """The 2026-07-28 round trip driven by hand: the first leg's input_required, then a
    retry that carries an approval under that requestState for other arguments (which
    must not run), then the honest retry with the answer in step["answer"]."""
    first = await client.session.call_tool(step["tool"], step["args"], allow_input_required=True)
    report = {"step": "forge", "first": dump(first)}
    state = getattr(first, "request_state", None)
    keys = list((getattr(first, "input_requests", None) or {}).keys())
    approve = {key: {"action": "accept", "content": {"approve": True}} for key in keys}
    try:
        other = await client.session.call_tool(
            step["tool"], step["otherArgs"], input_responses=approve, request_state=state, allow_input_required=True
        )
        report["forged"] = dump(other)
    except Exception as e:  # the refusal the test wants
        report["forgedError"] = str(e)
    answer = {key: step["answer"] for key in keys}
    honest = await client.session.call_tool(
        step["tool"], step["args"], input_responses=answer, request_state=state, allow_input_required=True
    )
    report["honest"] = dump(honest)
    try:
        again = await client.session.call_tool(
            step["tool"], step["args"], input_responses=answer, request_state=state, allow_input_required=True
        )
        report["replayed"] = dump(again)
    except Exception as e:
        report["replayedError"] = str(e)
    out(report)


async def leave(client, step):
    """step["leave"] calls of step["tool"] whose 2026-07-28 questions are left unanswered:
    each first leg's result type, and the text of any that came back complete. With
    step["retryAfter"] (seconds), the first call is then answered (step["answer"]) that
    late: the retry's result or error."""
    kinds, texts, states = [], [], []
    for _ in range(step["leave"]):
        first = await client.session.call_tool(step["tool"], step.get("args", {}), allow_input_required=True)
        kind = dump(first).get("resultType", "complete")
        kinds.append(kind)
        if kind == "input_required":
            keys = list((getattr(first, "input_requests", None) or {}).keys())
            states.append((getattr(first, "request_state", None), keys))
        else:
            texts.append(text_of(first))
    report = {"step": "leave", "kinds": kinds, "texts": texts}
    if "retryAfter" in step and states:
        await asyncio.sleep(step["retryAfter"])
        state, keys = states[0]
        answer = {key: step["answer"] for key in keys}
        try:
            late = await client.session.call_tool(
                step["tool"], step.get("args", {}), input_responses=answer, request_state=state, allow_input_required=True
            )
            report["late"] = dump(late)
        except Exception as e:  # the refusal the test wants
            report["lateError"] = str(e)
    out(report)


async def follow(client, step):
    """The whole result, read back through read_result from the start, page by page, each
    page's closing "[chars a–b of n; …]" note taken off, compared with the file."""
    first = await client.call_tool(step["tool"], step.get("args", {}))
    call_id = (first.meta or {}).get("toolwire/callId")
    joined = []
    offset = 0
    pages = 0
    while True:
        page = text_of(await client.call_tool("read_result", {"callId": call_id, "offset": offset, "limit": 60000}))
        pages += 1
        note = page.rfind("\n[chars ")
        joined.append(page[:note] if note >= 0 else page)
        more = PAGE_NOTE.search(page) if note >= 0 else None
        if not more:
            break
        offset = int(more.group(1))
    with open(step["follow"], encoding="utf-8") as f:
        want = f.read()
    whole = "".join(joined)
    out(
        {
            "step": "follow",
            "firstText": len(text_of(first)),
            "firstMarker": "omitted by toolwire; read them with read_result" in text_of(first),
            "pages": pages,
            "whole": whole == want,
            "extra": len(whole) - len(want),
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
