"""What the test agents share (tests/agui/*_agent.py, agents.py): a small PNG of noise, the
long result, the framework agents' plain tools (each agent wraps them in its framework's
own tool decorator), and serving an ASGI app on a free loopback port that the test reads
from the first line printed ("listening on PORT")."""

import asyncio
import random
import socket
import struct
import zlib

import uvicorn


def png(width: int, height: int, seed: int) -> bytes:
    """A valid RGB PNG of noise (fixed `seed`, one per agent, so each agent's image is its
    own blob): about 3 KB at 32×32, past the 1 KB the store keeps inline, so toolwire must
    put it in its blob store."""
    rng = random.Random(seed)
    rows = b"".join(b"\x00" + bytes(rng.randrange(256) for _ in range(width * 3)) for _ in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


# The long result the framework agents' tools return: 201,000 characters, a to z.
LONG = "".join(chr(ord("a") + i % 26) for i in range(201_000))


def weather(city: str) -> str:
    """The weather in a city, as text."""
    return f"sunny in {city}"


def forecast(city: str) -> dict:
    """Tomorrow's forecast, as a dict."""
    return {"city": city, "high": 21, "low": 12, "rain": False}


def ratio(a: int, b: int) -> float:
    """a / b; fails on b = 0."""
    if b == 0:
        raise ValueError("division by zero in ratio")
    return a / b


def archive() -> str:
    """A long record, 201,000 characters."""
    return LONG


# What the scripted models of the Agent Framework and Strands agents do: every call at
# once (id, tool, arguments as the model writes them), then this answer.
CALLS = [
    ("call_weather", "weather", '{"city": "Paris"}'),
    ("call_forecast", "forecast", '{"city": "Paris"}'),
    ("call_radar", "radar", "{}"),
    ("call_ratio", "ratio", '{"a": 1, "b": 0}'),
    ("call_archive", "archive", "{}"),
]
ANSWER = "It is sunny in Paris; the ratio failed."


def serve(app) -> None:
    """Serves `app` on 127.0.0.1, port 0 (the system picks a free one), and prints the port
    once the server accepts connections."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))

    async def run() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.02)
        print(f"listening on {port}", flush=True)
        await task

    asyncio.run(run())
