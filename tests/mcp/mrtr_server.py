"""A 2026-07-28 MCP server on the official Python SDK (mcp 2.x) whose tools ask for input
the stateless way (Multi Round-Trip Requests): `book_table` once, `two_rounds` twice,
`ask_forever` again whatever the answer (a server a client must not loop with).

Run: venv/bin/python mrtr_server.py            (stdio)
     venv/bin/python mrtr_server.py --http PORT (streamable HTTP at /mcp)
     venv/bin/python mrtr_server.py --slow-start SECONDS LOG
         (stdio, after appending a line to LOG and sleeping SECONDS before reading
         anything: a server as slow to start as markitdown-mcp, whose starts are counted)
"""

import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    TextContent,
)

server = MCPServer("toolwire-mrtr-fixture")


def ask(message: str, fields: dict) -> ElicitRequest:
    return ElicitRequest(
        params=ElicitRequestFormParams(
            message=message,
            requestedSchema={"type": "object", "properties": fields, "required": list(fields)},
        )
    )


def answer(ctx: Context, key: str) -> dict:
    response = (ctx.input_responses or {}).get(key) or {}
    if hasattr(response, "model_dump"):
        response = response.model_dump(by_alias=True, exclude_none=True)
    return response.get("content") or {}


@server.tool()
def book_table(restaurant: str, ctx: Context) -> CallToolResult | InputRequiredResult:
    """Books a table; asks who it is for and for how many."""
    if ctx.request_state != "book-1":
        return InputRequiredResult(
            inputRequests={
                "guest": ask(
                    f"Who is the table at {restaurant} for?",
                    {"name": {"type": "string"}, "guests": {"type": "integer"}},
                )
            },
            requestState="book-1",
        )
    got = answer(ctx, "guest")
    text = f"Booked {restaurant} for {got.get('name')}, {got.get('guests')} guests"
    return CallToolResult(content=[TextContent(type="text", text=text)])


@server.tool()
def two_rounds(ctx: Context) -> CallToolResult | InputRequiredResult:
    """Asks two questions, one round each."""
    state = ctx.request_state or ""
    if not state:
        return InputRequiredResult(
            inputRequests={"first": ask("First course?", {"dish": {"type": "string"}})},
            requestState="round-1",
        )
    if state == "round-1":
        first = answer(ctx, "first").get("dish", "?")
        return InputRequiredResult(
            inputRequests={"second": ask("Second course?", {"dish": {"type": "string"}})},
            requestState=f"round-2:{first}",
        )
    second = answer(ctx, "second").get("dish", "?")
    first = state.split(":", 1)[1]
    return CallToolResult(content=[TextContent(type="text", text=f"{first} then {second}")])


@server.tool()
def ask_forever(ctx: Context) -> InputRequiredResult:
    """Asks again, whatever the answer."""
    round_no = int(ctx.request_state or "0") + 1
    return InputRequiredResult(
        inputRequests={"again": ask(f"Question {round_no}?", {"ok": {"type": "boolean"}})},
        requestState=str(round_no),
    )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--slow-start":
        with open(sys.argv[3], "a") as log:
            log.write("started\n")
        time.sleep(float(sys.argv[2]))
        server.run("stdio")
    elif len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.settings.port = int(sys.argv[2])
        server.run("streamable-http")
    else:
        server.run("stdio")
