"""Python `toolwire.normalize` beside its peer, the Python `mcp` SDK's
`CallToolResult.model_validate` (pydantic-core), on the payloads of scripts/bench
(crates/toolwire-bench/src/payloads.rs): 10,000 small MCP text results, and one result
with a 20 MB image. Both are given the same dicts (what an MCP client session holds).
Run with a release build installed: `python bench.py` (needs `pip install mcp`)."""

import base64
import json
import random
import statistics
import time

from mcp.types import CallToolResult

import toolwire


def small_results(n):
    return [
        {"content": [{"type": "text", "text": f"result {i}: 3 files changed, 12 insertions(+)"}]}
        for i in range(n)
    ]


def image_result(size):
    rng = random.Random(1)
    png = b"\x89PNG\r\n\x1a\n" + rng.randbytes(size - 8)
    return {
        "content": [
            {"type": "text", "text": "Here is the screenshot:"},
            {"type": "image", "data": base64.b64encode(png).decode(), "mimeType": "image/png"},
        ]
    }


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def row(name, ours, peer):
    print(f"| {name} | {ours * 1e3:.1f} ms | {peer * 1e3:.1f} ms | {ours / peer:.2f}x |")


def main():
    small = small_results(10_000)
    image = image_result(20_000_000)
    print("| workload | toolwire.normalize | CallToolResult.model_validate | ratio |")
    print("| --- | --- | --- | --- |")
    ours, _ = best(lambda: [toolwire.normalize(r) for r in small], 5)
    peer, _ = best(lambda: [CallToolResult.model_validate(r) for r in small], 5)
    row("10,000 small MCP results", ours, peer)
    ours, _ = best(lambda: toolwire.normalize(image), 5)
    peer, _ = best(lambda: CallToolResult.model_validate(image), 5)
    row("one 20 MB image result", ours, peer)
    # The boundary: a small call against json.loads of the same result's JSON text.
    text = [json.dumps(r) for r in small]
    loads, _ = best(lambda: [json.loads(t) for t in text], 5)
    ours, _ = best(lambda: [toolwire.normalize(r) for r in small], 5)
    print(f"| 10,000 small results: json.loads alone | {loads * 1e3:.1f} ms | | |")


if __name__ == "__main__":
    main()
