"""A FastMCP 4 server (the `fastmcp` package, pinned in requirements.txt) for the real-server
matrix (crates/toolwire/tests/mcp_matrix.rs): the kinds of result the FastMCP authors in the
wild return, through FastMCP's own conversions rather than the SDK's. The same tools, names
and bytes as fastmcp_server.py (whose PNG and WAV makers it uses), so the test checks both
servers with one set of assertions, plus a result mixing text, an image and audio.

Run: venv/bin/python fastmcp4_server.py  (stdio)
"""

import asyncio

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.types import Audio, Image
from pydantic import BaseModel

from fastmcp_server import png, wav

server = FastMCP("toolwire-fastmcp4-fixture")


@server.tool
def gradient_png(width: int, height: int, save_to: str) -> Image:
    """A PNG of the given size; the same bytes are written to `save_to` for comparison."""
    data = png(width, height)
    with open(save_to, "wb") as f:
        f.write(data)
    return Image(data=data, format="png")


@server.tool
def tone_wav(millis: int, save_to: str) -> Audio:
    """A WAV tone; the same bytes are written to `save_to` for comparison."""
    data = wav(millis)
    with open(save_to, "wb") as f:
        f.write(data)
    return Audio(data=data, format="wav")


@server.tool
def big_text(megabytes: int) -> str:
    """`megabytes` MB of numbered lines: 'line 0000001 ' plus filler, 100 bytes each."""
    count = megabytes * 1_000_000 // 100
    return "".join(f"line {i:07d} {'x' * 86}\n" for i in range(1, count + 1))


class Forecast(BaseModel):
    """Declared in this order on purpose (not alphabetical): toolwire keeps it."""

    city: str
    temperature_c: float
    conditions: str
    humidity: int


@server.tool
def forecast(city: str) -> Forecast:
    """The forecast for a city with a station: structured output with an outputSchema.
    An unknown city is a ToolError, whose text must survive the outputSchema."""
    if city != "Lisbon":
        raise ToolError(f"no weather station in {city!r}; known: Lisbon")
    return Forecast(city="Lisbon", temperature_c=21.5, conditions="sunny", humidity=40)


@server.tool
def mixed(width: int, millis: int, save_to: str) -> list:
    """Text, a square PNG and a WAV tone in one result, in that order.

    FastMCP makes each item of a returned list its own content block. The same bytes are
    written to `save_to` + .png and .wav for comparison."""
    image, sound = png(width, width), wav(millis)
    for data, ext in ((image, ".png"), (sound, ".wav")):
        with open(save_to + ext, "wb") as f:
            f.write(data)
    return [f"a {width}px image and {millis} ms of sound", Image(data=image, format="png"), Audio(data=sound, format="wav")]


@server.tool
async def slow_count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting progress and logging as it goes."""
    await ctx.info(f"counting to {steps}")
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i} of {steps}")
        await asyncio.sleep(0.05)
    await ctx.warning("done counting")
    return f"counted to {steps}"


if __name__ == "__main__":
    server.run(show_banner=False)
