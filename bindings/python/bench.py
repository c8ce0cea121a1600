"""Python `toolwire.normalize` beside its peer, the Python `mcp` SDK's
`CallToolResult.model_validate` (pydantic-core), and beside the floors of its boundary.

Run by scripts/bench (its `packages` workload, crates/toolwire-bench/src/packages.rs),
which writes the payloads and reads the one JSON line this prints:

    python bench.py SMALL.jsonl IMAGE.json ROUNDS

SMALL.jsonl holds one small MCP result per line and IMAGE.json one result with a 20 MB
image: the payloads of the Rust rows (crates/toolwire-bench/src/payloads.rs), read here
with json.loads before any timing, so that both sides get the same dicts (what an MCP
client session holds). Each figure is the best of ROUNDS, in milliseconds:

- `small`: normalize of every small result; the peer's model_validate of the same; and
  json.loads of each normalized result's JSON text (the least any value coming back
  from native code costs, one half of the boundary's floor);
- `image`: normalize of the image result; the peer's model_validate; and one copy of its
  base64 string each way (`str.encode`, then `bytes.decode`), the floor of a string that
  crosses into Rust and back.

Needs the package installed (`pip install ./bindings/python`) and `mcp` (2.x).
"""

import json
import sys
import time

from mcp.types import CallToolResult

import toolwire


def best(fn, rounds):
    """The least time of `rounds` runs of `fn`, in milliseconds."""
    least = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        least = min(least, time.perf_counter() - start)
    return least * 1e3


def main(small_path, image_path, rounds):
    with open(small_path, encoding="utf-8") as f:
        small = [json.loads(line) for line in f if line.strip()]
    with open(image_path, encoding="utf-8") as f:
        image = json.load(f)
    data = next(b["data"] for b in image["content"] if b.get("type") == "image")
    texts = [json.dumps(toolwire.normalize(r)) for r in small]

    def copy_each_way():
        data.encode().decode()

    answer = {
        "small": {
            "n": len(small),
            "ours_ms": best(lambda: [toolwire.normalize(r) for r in small], rounds),
            "peer_ms": best(lambda: [CallToolResult.model_validate(r) for r in small], rounds),
            "loads_ms": best(lambda: [json.loads(t) for t in texts], rounds),
        },
        "image": {
            "chars": len(data),
            "ours_ms": best(lambda: toolwire.normalize(image), rounds),
            "peer_ms": best(lambda: CallToolResult.model_validate(image), rounds),
            "copy_ms": best(copy_each_way, rounds),
        },
    }
    print(json.dumps(answer))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: python bench.py SMALL.jsonl IMAGE.json ROUNDS")
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
