"""A scripted model behind a loopback provider API, for driving real MCP hosts headless
(crates/toolwire/tests/gateway_hosts.rs): Anthropic Messages (`claude -p`), Gemini
`streamGenerateContent` (`gemini -p`) and OpenAI Responses (`codex exec`), each streamed
in the provider's own event format, so the host cannot tell it from the real API.

The model follows a script of tool calls, one a turn: each turn it calls the next tool of
the script it has not called yet (picked from the tools the host offers by its server and
tool name, whatever prefix the host gives it; a tool not offered yet is called later, and
while none is offered it calls the host's own wait tool if there is one), then
`read_result` as the gateway's marker in the last result says, then it answers "done".
Each turn's request is recorded (JSON lines in RECORD): the items the host sent back
after the model's last call, i.e. the tool result exactly as the host forwards it to its
model, and the MCP tools it offered. Requests that offer no tools (titles, quota checks,
classifiers) are answered with plain text and not recorded as turns.

Run: python3 provider.py PORT_FILE RECORD [REQUESTS]   (prints nothing; writes the port it
listens on to PORT_FILE, every request to REQUESTS if given, and stops when its parent
closes stdin)
"""

import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# (server, tool, arguments), in the order the model calls them.
SCRIPT = [
    ("ev", "get-tiny-image", {}),
    ("py", "forecast_summary", {"city": "Lisbon"}),
    ("ev", "get-resource-links", {"count": 2}),
    ("py", "fail_quota", {}),
    ("py", "build_log", {}),
]
# The gateway's marker names the call that reads the rest; inside a JSON string (a cut
# structuredContent shown as JSON) its quotes come escaped, and a model reads past that.
READ_RESULT = re.compile(r'read_result (\{\\?"callId\\?":.*?\})')

LOCK = threading.Lock()
STARTED = time.monotonic()

# Claude Code's tool for waiting on MCP servers that are still starting.
WAIT = "WaitForMcpServers"
# How many times the model waits for a server before it says the tool is missing.
WAITS = 30

# Gemini CLI's side requests ask for JSON: the next-speaker check and the model router.
SIDE_JSON = {"next_speaker": "user", "reasoning": "done", "complexity_reasoning": "scripted", "complexity_score": 1}


def squash(name):
    return re.sub(r"[^a-z0-9]", "", name.lower())


def pick(tools, server, tool):
    """The offered tool that is `server`'s `tool`: its name ends with the tool's and names
    the server (hosts prefix `mcp__ev__`, `ev__`, `mcp_ev_`...)."""
    for name in tools:
        if squash(name).endswith(squash(server + tool)) or (
            squash(name).endswith(squash(tool)) and server in name
        ):
            return name
    return None


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def label(name):
    """What a call the model made was for: a step of the script, read_result, or the
    host's own tool (Claude Code's WaitForMcpServers) under its name."""
    for server, tool, _ in SCRIPT:
        if pick([name], server, tool):
            return tool
    return "read_result" if squash(name).endswith("readresult") else name


def decide(tools, calls, forwarded):
    """The model's next move: ("call", name, args, step) or ("text", words, None, step),
    where step names the call whose result `forwarded` holds (None at the start). `calls`
    are the names of the tools the model called so far, in order."""
    done = label(calls[-1]) if calls else None
    made = [label(c) for c in calls]
    left = [step for step in SCRIPT if step[1] not in made]
    if left:
        # The next step whose tool is offered: a server still starting (its tools arrive
        # with list_changed) is called later.
        for server, tool, args in left:
            name = pick(tools, server, tool)
            if name is not None:
                return ("call", name, args, done)
        if WAIT in tools and made.count(WAIT) < WAITS:
            # Its servers are still starting: a model is told to wait for them. It takes
            # a moment between waits, as a real model does between turns.
            if made.count(WAIT):
                time.sleep(1)
            return ("call", WAIT, {}, done)
        missing = ", ".join(f"{server}/{tool}" for server, tool, _ in left)
        return ("text", f"no tool {missing} among {sorted(tools)}", None, done)
    if "read_result" not in made:
        marker = next((m.group(1) for s in strings(forwarded) for m in [READ_RESULT.search(s)] if m), None)
        name = pick(tools, "", "read_result")
        if marker and name:
            return ("call", name, json.loads(marker.replace('\\"', '"')), done)
    return ("text", "done", None, done)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {}

    def send_json(self, value, status=200):
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, events):
        """`events`: (event name or None, data) pairs, sent as one SSE stream."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            self.wfile.write(f"{head}data: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    def record(self, wire, step, forwarded, move, tools):
        # The MCP tools offered (and the host's wait tool): what the host had listed then.
        offered = sorted(t for t in tools if "__" in t or t.startswith("mcp_") or t == WAIT)
        turn = {
            "wire": wire,
            "after": step or "start",
            "forwarded": forwarded,
            "next": move[:3],
            "offered": offered,
            "at": round(time.monotonic() - STARTED, 2),
        }
        with LOCK, open(self.server.record_path, "a") as f:
            f.write(json.dumps(turn) + "\n")

    def do_GET(self):
        path = self.path.split("?")[0]
        if path.endswith("/models"):
            # OpenAI's list, Gemini's list: one model, either way.
            self.send_json({"object": "list", "data": [{"id": "scripted", "object": "model"}], "models": []})
        else:
            self.send_json({"error": {"message": f"no {path}"}}, 404)

    def do_POST(self):
        path = self.path.split("?")[0]
        body = self.body()
        if self.server.all_path:
            with LOCK, open(self.server.all_path, "a") as f:
                f.write(json.dumps({"path": self.path, "body": body}) + "\n")
        if path.endswith("/messages/count_tokens"):
            return self.send_json({"input_tokens": 100})
        if path.endswith("/messages"):
            return self.anthropic(body)
        if ":countTokens" in path:
            return self.send_json({"totalTokens": 100})
        if ":streamGenerateContent" in path or ":generateContent" in path:
            return self.gemini(body, stream=":stream" in path)
        if path.endswith("/responses"):
            return self.openai(body)
        self.send_json({"error": {"message": f"no {path}"}}, 404)

    # --- Anthropic Messages -------------------------------------------------------------

    def anthropic(self, body):
        tools = [t.get("name", "") for t in body.get("tools") or []]
        messages = body.get("messages") or []
        calls = [
            b.get("name", "")
            for m in messages
            if m.get("role") == "assistant" and isinstance(m.get("content"), list)
            for b in m["content"]
            if b.get("type") == "tool_use"
        ]
        results = len(calls)
        last_call = max(
            (
                i
                for i, m in enumerate(messages)
                if m.get("role") == "assistant"
                and isinstance(m.get("content"), list)
                and any(b.get("type") == "tool_use" for b in m["content"])
            ),
            default=None,
        )
        forwarded = messages[last_call + 1 :] if last_call is not None else []
        if not tools:
            move = ("text", "ok", None, None)
        else:
            move = decide(tools, calls, forwarded)
            self.record("anthropic", move[3], forwarded, move, tools)
        if move[0] == "call":
            block = {"type": "tool_use", "id": f"toolu_{results:02d}", "name": move[1], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(move[2])}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": move[1]}
            stop = "end_turn"
        model = body.get("model", "claude-scripted")
        if not body.get("stream"):
            content = dict(block)
            if move[0] == "call":
                content["input"] = move[2]
            else:
                content["text"] = move[1]
            return self.send_json(
                {
                    "id": f"msg_{results}",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [content],
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 100, "output_tokens": 10},
                }
            )
        self.send_sse(
            [
                (
                    "message_start",
                    {
                        "type": "message_start",
                        "message": {
                            "id": f"msg_{results}",
                            "type": "message",
                            "role": "assistant",
                            "model": model,
                            "content": [],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": {"input_tokens": 100, "output_tokens": 1},
                        },
                    },
                ),
                ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop, "stop_sequence": None},
                        "usage": {"output_tokens": 10},
                    },
                ),
                ("message_stop", {"type": "message_stop"}),
            ]
        )

    # --- Gemini generateContent ---------------------------------------------------------

    def gemini(self, body, stream):
        tools = [
            d.get("name", "")
            for t in body.get("tools") or []
            for d in t.get("functionDeclarations") or t.get("function_declarations") or []
        ]
        contents = body.get("contents") or []
        calls = [p["functionCall"].get("name", "") for c in contents for p in c.get("parts") or [] if "functionCall" in p]
        results = len(calls)
        # What followed the model's last function call: the host's answer to it.
        last_call = max(
            (i for i, c in enumerate(contents) if any("functionCall" in p for p in c.get("parts") or [])),
            default=None,
        )
        forwarded = contents[last_call + 1 :] if last_call is not None else []
        if not tools:
            # Gemini CLI's own side requests (the next-speaker check, routing) ask for JSON.
            move = ("text", json.dumps(SIDE_JSON), None, None)
        else:
            move = decide(tools, calls, forwarded)
            self.record("gemini", move[3], forwarded, move, tools)
        if move[0] == "call":
            part = {"functionCall": {"name": move[1], "args": move[2]}}
        else:
            part = {"text": move[1]}
        response = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
            "modelVersion": "gemini-scripted",
        }
        if stream:
            self.send_sse([(None, response)])
        else:
            self.send_json(response)

    # --- OpenAI Responses ---------------------------------------------------------------

    def openai(self, body):
        def name_of(t):
            return t.get("name") or (t.get("function") or {}).get("name") or ""

        # name as the model sees it -> (namespace or None, name): Codex groups each MCP
        # server's tools in a namespace, and the model's call names both.
        spaced = {}
        for t in body.get("tools") or []:
            spaced[name_of(t)] = (None, name_of(t))
            for inner in t.get("tools") or []:
                spaced[f"{name_of(t)}__{name_of(inner)}"] = (name_of(t), name_of(inner))
        tools = list(spaced)
        items = body.get("input") or []
        calls = [
            (f"{i['namespace']}__" if i.get("namespace") else "") + i.get("name", "")
            for i in items
            if i.get("type") in ("function_call", "custom_tool_call")
        ]
        results = len(calls)
        last_call = max(
            (i for i, item in enumerate(items) if item.get("type") in ("function_call", "custom_tool_call")),
            default=None,
        )
        forwarded = items[last_call + 1 :] if last_call is not None else []
        if not tools:
            move = ("text", "ok", None, None)
        else:
            move = decide(tools, calls, forwarded)
            self.record("openai", move[3], forwarded, move, tools)
        rid = f"resp_{results}_{time.monotonic_ns()}"
        if move[0] == "call":
            namespace, name = spaced[move[1]]
            item = {
                "type": "function_call",
                "id": f"fc_{results}",
                "call_id": f"call_{results:02d}",
                **({"namespace": namespace} if namespace else {}),
                "name": name,
                "arguments": json.dumps(move[2]),
                "status": "completed",
            }
        else:
            item = {
                "type": "message",
                "id": f"msg_{results}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": move[1], "annotations": []}],
            }
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 110,
        }
        base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": body.get("model", "")}
        self.send_sse(
            [
                ("response.created", {"type": "response.created", "response": {**base, "status": "in_progress", "output": []}}),
                ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
                ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
                (
                    "response.completed",
                    {"type": "response.completed", "response": {**base, "status": "completed", "output": [item], "usage": usage}},
                ),
            ]
        )


def main():
    port_file, record = sys.argv[1], sys.argv[2]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.record_path = record
    # Every request too, for seeing what a host sends when a test fails.
    server.all_path = sys.argv[3] if len(sys.argv) > 3 else None
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # Stops when the test that started it goes away (its stdin closes).
    sys.stdin.read()


if __name__ == "__main__":
    main()
