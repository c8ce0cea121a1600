"""A misbehaving MCP server for toolwire's tests, speaking raw 2025-11-25 JSON-RPC on
stdio with the standard library only. argv[1] picks the misbehaviour:

  garbage    writes junk on stdout and never answers
  exit       answers the handshake, then exits when a tool is called
  huge       answers a tool call with a 100 MB text block
  flood      sends 4 KB progress notifications for one second, then answers
  oversized  answers a tool call with a 17 MiB text block, its id after the result (the
             TypeScript SDK's key order)
  deaf       never answers `server/discover` (a 2025-11-25 server that drops a request
             it does not know), and otherwise works
  elicit     asks the person again after every answer (`elicitation/create`, up to 40
             times in one call), until the call is cancelled; then answers how it went
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

# Messages read while a call waited for an answer of its own, handled after it.
queued = []


def messages():
    while True:
        if queued:
            yield queued.pop(0)
            continue
        line = sys.stdin.readline()
        if not line:
            return
        yield json.loads(line)


def elicit_until_cancelled(mid):
    """Asks again after every answer, up to 40 times; stops when the call is cancelled."""
    actions = []
    for n in range(40):
        ask_id = f"ask-{n}"
        send({"jsonrpc": "2.0", "id": ask_id, "method": "elicitation/create", "params": {
            "mode": "form", "message": f"Question {n + 1}?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
        }})
        while True:
            line = sys.stdin.readline()
            if not line:
                sys.exit(0)
            msg = json.loads(line)
            if msg.get("id") == ask_id and "method" not in msg:
                actions.append(msg.get("result", {}).get("action", "error"))
                break
            if msg.get("method") == "notifications/cancelled" and msg["params"].get("requestId") == mid:
                sys.stderr.write(f"bad server: cancelled after {len(actions)} answers\n")
                return
            queued.append(msg)
    send({"jsonrpc": "2.0", "id": mid, "result": {"content": [
        {"type": "text", "text": f"asked {len(actions)} times: {actions}"}]}})


for msg in messages():
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "server/discover" and MODE == "deaf":
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
    elif method == "tools/call" and MODE == "oversized":
        text = "x" * (17 * 1024 * 1024)
        send({"result": {"content": [{"type": "text", "text": text}]}, "jsonrpc": "2.0", "id": mid})
    elif method == "tools/call" and MODE == "elicit":
        elicit_until_cancelled(mid)
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
