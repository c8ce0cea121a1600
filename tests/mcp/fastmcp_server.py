"""A FastMCP server of toolwire's own (mcp 2.x, where FastMCP is `MCPServer`), for the
real-server matrix (crates/toolwire/tests/mcp_matrix.rs): one tool per kind of result a
FastMCP author returns, each deterministic so the test can check it byte for byte.

It is built on the official SDK pinned in requirements.txt, whose MCPServer is the FastMCP
API under its mcp 2.x name. fastmcp4_server.py has the same tools on the separate `fastmcp`
package (FastMCP 4, pinned there too), whose own conversions differ; the matrix checks both.

Run: venv/bin/python fastmcp_server.py  (stdio)
"""

import asyncio
import base64
import io
import math
import struct
import wave
import zlib

from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Audio, Image
from mcp.types import TextContent

server = MCPServer("toolwire-fastmcp-fixture")


def png(width: int, height: int) -> bytes:
    """A real RGB PNG with a noisy gradient: noisy so that it stays above toolwire's
    1 KiB inline threshold after compression, and so lands in the blob store."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    rows = bytearray()
    seed = 1
    for y in range(height):
        rows.append(0)  # filter: none
        for x in range(width):
            seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
            rows += bytes(((x * 255) // max(width - 1, 1), (y * 255) // max(height - 1, 1), seed >> 23))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(rows))) + chunk(b"IEND", b"")


def wav(millis: int) -> bytes:
    """A 440 Hz mono 16-bit WAV of `millis` milliseconds."""
    rate = 8000
    frames = b"".join(
        struct.pack("<h", int(12000 * math.sin(2 * math.pi * 440 * i / rate))) for i in range(rate * millis // 1000)
    )
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(frames)
    return out.getvalue()


@server.tool()
def gradient_png(width: int, height: int, save_to: str) -> Image:
    """A PNG of the given size; the same bytes are written to `save_to` for comparison."""
    data = png(width, height)
    with open(save_to, "wb") as f:
        f.write(data)
    return Image(data=data, format="png")


@server.tool()
def tone_wav(millis: int, save_to: str) -> Audio:
    """A WAV tone; the same bytes are written to `save_to` for comparison."""
    data = wav(millis)
    with open(save_to, "wb") as f:
        f.write(data)
    return Audio(data=data, format="wav")


@server.tool()
def big_text(megabytes: int) -> str:
    """`megabytes` MB of numbered lines: 'line 0000001 ' plus filler, 100 bytes each."""
    count = megabytes * 1_000_000 // 100
    return "".join(f"line {i:07d} {'x' * 86}\n" for i in range(1, count + 1))


def hit(i: int, size: int) -> str:
    """Block `i` of many_blocks: 'hit <i>:' padded with 'y' to `size` characters."""
    head = f"hit {i}:"
    return head + "y" * (size - len(head))


@server.tool()
def many_blocks(count: int, size: int) -> list[TextContent]:
    """`count` text blocks of `size` characters each (search hits, say): many small blocks,
    which toolwire keeps whole at the head and the tail, the run between them one marker."""
    return [TextContent(type="text", text=hit(i, size)) for i in range(count)]


class Forecast(BaseModel):
    """Declared in this order on purpose (not alphabetical): toolwire keeps it."""

    city: str
    temperature_c: float
    conditions: str
    humidity: int


STATIONS = {"Lisbon": Forecast(city="Lisbon", temperature_c=21.5, conditions="sunny", humidity=40)}


class Note(BaseModel):
    """A structured result whose one string is long: drawn as a tree, cut on a screen."""

    title: str
    body: str
    words: int


@server.tool()
def long_note(words: int) -> Note:
    """A note of `words` words in one string field (structured output)."""
    body = " ".join(f"word{i}" for i in range(1, words + 1))
    return Note(title="A long note", body=body, words=words)


@server.tool()
def forecast(city: str) -> Forecast:
    """The forecast for a city with a station: structured output with an outputSchema.
    An unknown city is a ToolError, whose text must survive the outputSchema."""
    if city not in STATIONS:
        raise ToolError(f"no weather station in {city!r}; known: {', '.join(STATIONS)}")
    return STATIONS[city]


def pdf(kilobytes: int) -> bytes:
    """A PDF's bytes as far as a sniffer sees: its header, then `kilobytes` KiB of a body
    made by a formula (crates/toolwire/tests/gateway.rs makes the same bytes)."""
    return b"%PDF-1.7\n" + bytes((i * 7) % 251 for i in range(kilobytes * 1024)) + b"\n%%EOF\n"


# A 1x1 PNG, sent as a data URI that calls it a JPEG (as careless servers do).
TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


class Document(BaseModel):
    """A document as server-pdf (an MCP App) returns one: its bytes base64 in a field."""

    name: str
    bytes: str
    preview: str
    pages: int


@server.tool()
def document(kilobytes: int) -> Document:
    """A PDF of about `kilobytes` KiB in structured output, its bytes bare base64, and a
    preview image as a data URI."""
    return Document(
        name="report.pdf",
        bytes=base64.b64encode(pdf(kilobytes)).decode(),
        preview="data:image/jpeg;base64," + TINY_PNG,
        pages=3,
    )


class Row(BaseModel):
    id: int
    name: str


class Table(BaseModel):
    """Rows in structured output: a query's answer."""

    rows: list[Row]
    total: int


@server.tool()
def table(count: int) -> Table:
    """`count` rows (id, name) in structured output."""
    return Table(rows=[Row(id=i, name=f"row {i}") for i in range(count)], total=count)


APP_URI = "ui://fixture/chart.html"


@server.resource(APP_URI, mime_type="text/html;profile=mcp-app")
def chart_app() -> str:
    """An MCP App's page, which a host draws beside the tool that names it."""
    return "<!doctype html><title>chart</title><p>the fixture's app</p>"


@server.tool(meta={"ui": {"resourceUri": APP_URI}})
def chart(points: int) -> str:
    """A chart's data, drawn by the app at `_meta.ui.resourceUri`."""
    return ",".join(str(i * i) for i in range(points))


@server.tool()
async def slow_count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting progress and logging as it goes."""
    # Logging is deprecated by the 2026-07-28 revision, but this server speaks 2025-11-25
    # over stdio and sends the messages anyway, mid-call, as FastMCP servers in the wild do.
    await ctx.info(f"counting to {steps}")
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i} of {steps}")
        await asyncio.sleep(0.05)
    await ctx.warning("done counting")
    return f"counted to {steps}"


if __name__ == "__main__":
    server.run()
