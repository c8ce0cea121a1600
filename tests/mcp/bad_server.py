"""A misbehaving MCP server for toolwire's tests, speaking raw 2025-11-25 JSON-RPC on
stdio with the standard library only. argv[1] picks the misbehaviour:

  garbage    writes junk on stdout and never answers
  exit       answers the handshake, then exits when a tool is called
  huge       answers a tool call with a 100 MB text block
  flood      sends 4 KB progress notifications for one second, then answers
"""

import json
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "exit"


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


if MODE == "garbage":
    sys.stdout.write("this is not JSON-RPC\n{{{ neither is this\n")
    sys.stdout.flush()
    for _ in sys.stdin:
        sys.stdout.write("garbage again\n")
        sys.stdout.flush()
    sys.exit(0)

for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bad", "version": "1"},
        }})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [
            {"name": "work", "description": "misbehaves", "inputSchema": {"type": "object"}},
            {"name": "fine", "description": "answers", "inputSchema": {"type": "object"}},
        ]}})
    elif method == "tools/call" and msg["params"]["name"] == "fine":
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "fine"}]}})
    elif method == "tools/call" and MODE == "exit":
        sys.stderr.write("bad server: crashing on purpose\n")
        sys.exit(3)
    elif method == "tools/call" and MODE == "huge":
        text = "x" * (100 * 1024 * 1024)
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
    elif method == "tools/call" and MODE == "flood":
        token = msg["params"].get("_meta", {}).get("progressToken")
        message, sent, end = "p" * 4096, 0, time.monotonic() + 1.0
        while token is not None and time.monotonic() < end:
            sent += 1
            send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                "progressToken": token, "progress": sent, "message": message}})
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": f"sent {sent}"}]}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}})
