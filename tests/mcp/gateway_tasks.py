"""Drives `toolwire gateway`'s tasks with the official Python SDK's client (mcp 2.x, pinned
in requirements.txt) on 2026-07-28, as a host that declares the tasks extension
(io.modelcontextprotocol/tasks, SEP-2663): a call answered with a task of the gateway's,
polled with tasks/get until it ends, cancelled with tasks/cancel; an id that is not this
client's refused. One JSON line per step for crates/toolwire/tests/gateway_tasks.rs.

    venv/bin/python gateway_tasks.py TOOLWIRE_BIN DATA_DIR HOST [GATEWAY ARGS...]
    GATEWAY_URL=http://127.0.0.1:PORT/mcp GATEWAY_TOKEN=... venv/bin/python gateway_tasks.py

Steps (GATEWAY_STEPS): {"task": TOOL, "args": {...}} polls to the end;
{"task": TOOL, "cancel": true} cancels once it works; {"get": ID} asks for a task by id;
{"tool": TOOL} is a plain call; {"foreign": TOOL} makes a task as this client and asks
for it as another client (over HTTP, another name).
"""

import asyncio
import json
import os
import sys
from typing import Any, ClassVar, Literal

import mcp_types as types
from mcp import Client
from mcp.client.extension import ClientExtension, ResultClaim
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from pydantic import ConfigDict, TypeAdapter

TASKS = "io.modelcontextprotocol/tasks"
ANY = TypeAdapter(dict[str, Any])


class Raw(types.Request[dict[str, Any], str]):
    """A request by method name with JSON params (the SDK has no tasks/* of its own); over
    HTTP its task id goes in the Mcp-Name header too, as 2026-07-28 requires."""

    name_param: ClassVar[str | None] = "taskId"


class TaskHandle(types.Result):
    """A CreateTaskResult: the task's fields flattened beside `resultType: "task"`."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str


async def unresolved(_handle, _ctx):
    raise RuntimeError("this client polls its tasks itself")


class Tasks(ClientExtension):
    identifier = TASKS

    def claims(self):
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=unresolved)]


def out(value):
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def client_for(url, server, name):
    """A client of the stdio `server`, or of the --http gateway at `url` with its token."""
    if url:
        headers = {"Authorization": f"Bearer {os.environ['GATEWAY_TOKEN']}"}
        server = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    return Client(
        server,
        client_info=types.Implementation(name=name, version="1.0.0"),
        read_timeout_seconds=120,
        extensions=[Tasks()],
    )


async def request(client, method, params):
    return await client.session.send_request(Raw(method=method, params=params), ANY)


async def create(client, step):
    handle = await client.session.call_tool(step["task"], step.get("args", {}), allow_claimed=True)
    if isinstance(handle, types.CallToolResult):
        return None, handle.model_dump(mode="json", by_alias=True, exclude_none=True)
    return handle.task_id, handle.model_dump(mode="json", by_alias=True, exclude_none=True)


async def poll(client, task_id, until=None):
    """tasks/get until the task ends (or `until` says stop); every answer seen."""
    seen = []
    for _ in range(600):
        got = await request(client, "tasks/get", {"taskId": task_id})
        seen.append(got)
        if got["status"] in ("completed", "failed", "cancelled") or (until and until(got)):
            return seen
        await asyncio.sleep(got.get("pollIntervalMs", 500) / 1000)
    return seen


async def run_task(client, step):
    task_id, created = await create(client, step)
    report = {"step": "task", "tool": step["task"], "created": created, "taskId": task_id}
    if task_id is None:
        out(report)
        return
    if step.get("cancel"):
        # Cancelled once the server's task reports progress: it is running upstream.
        before = await poll(client, task_id, until=lambda got: bool(got.get("statusMessage")))
        report["before"] = before[-1]
        report["cancel"] = await request(client, "tasks/cancel", {"taskId": task_id})
        report["after"] = await request(client, "tasks/get", {"taskId": task_id})
        try:
            report["again"] = await request(client, "tasks/cancel", {"taskId": task_id})
        except Exception as e:  # a task that ended cannot be cancelled
            report["againError"] = str(e)
    else:
        seen = await poll(client, task_id)
        report["statuses"] = [got["status"] for got in seen]
        report["messages"] = [got["statusMessage"] for got in seen if got.get("statusMessage")]
        report["final"] = seen[-1]
    out(report)


async def main():
    url = os.environ.get("GATEWAY_URL")
    toolwire, data, host, *gateway_args = sys.argv[1:] if not url else ("", "", "")
    steps = json.loads(os.environ.get("GATEWAY_STEPS", "[]"))
    server = StdioServerParameters(
        command=toolwire,
        args=["gateway", "--host", host, *gateway_args],
        env={**os.environ, "TOOLWIRE_DATA_DIR": data},
    )
    async with client_for(url, server, "gateway-tasks-host") as client:
        out({"step": "protocol", "version": getattr(client.session, "protocol_version", None)})
        await client.list_tools()
        for step in steps:
            try:
                if "task" in step:
                    await run_task(client, step)
                elif "get" in step:
                    out({"step": "get", "got": await request(client, "tasks/get", {"taskId": step["get"]})})
                elif "foreign" in step:
                    await foreign(client, url, step)
                else:
                    result = await client.call_tool(step["tool"], step.get("args", {}))
                    out({"step": "call", "result": result.model_dump(mode="json", by_alias=True, exclude_none=True)})
            except Exception as e:  # the step's failure is what the test checks
                out({"step": "error", "message": str(e)})


async def foreign(client, url, step):
    """A task made by this client, asked for by another (another name over HTTP)."""
    task_id, _ = await create(client, {"task": step["foreign"], "args": step.get("args", {})})
    report = {"step": "foreign", "taskId": task_id}
    async with client_for(url, None, "another-host") as other:
        await other.list_tools()
        try:
            report["otherGot"] = await request(other, "tasks/get", {"taskId": task_id})
        except Exception as e:
            report["otherError"] = str(e)
        try:
            report["otherCancel"] = await request(other, "tasks/cancel", {"taskId": task_id})
        except Exception as e:
            report["otherCancelError"] = str(e)
    report["ownFinal"] = (await poll(client, task_id))[-1]
    out(report)


if __name__ == "__main__":
    asyncio.run(main())
