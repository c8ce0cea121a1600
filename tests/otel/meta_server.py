"""An MCP server (the official Python SDK, tests/mcp/venv) whose one tool answers with the
`_meta` its `tools/call` request carried, so crates/toolwire/tests/otel.rs can check that
toolwire sent the call's W3C trace context (`traceparent`, `tracestate`) there.

Run: ../mcp/venv/bin/python meta_server.py  (stdio)
"""

import json
import random
import struct
import zlib

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.utilities.types import Image

server = MCPServer("toolwire-otel-meta-echo")


@server.tool()
def echo_meta(note: str, ctx: Context) -> str:
    """Returns the request's `_meta` as JSON text, and the note it was given."""
    meta = ctx.request_context.meta
    if meta is None:
        received = {}
    elif hasattr(meta, "model_dump"):
        received = meta.model_dump(by_alias=True, mode="json")
    else:
        received = dict(meta)
    return json.dumps({"note": note, "meta": received}, sort_keys=True)


def noisy_png(side: int) -> bytes:
    """A real RGB PNG of seeded noise: it does not compress, so it is stored as a blob."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rng = random.Random(7)
    rows = b"".join(b"\x00" + bytes(rng.randrange(256) for _ in range(side * 3)) for _ in range(side))
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


@server.tool()
def picture() -> Image:
    """A 64x64 noise PNG (about 12 KB)."""
    return Image(data=noisy_png(64), format="png")


if __name__ == "__main__":
    server.run()
