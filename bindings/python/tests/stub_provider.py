"""A local HTTP server standing in for the Anthropic Messages API, for the framework
tests: it records each request body as it arrived and answers with the scripted
replies in turn, so a test checks exactly what a framework sent the provider."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StubAnthropic:
    def __init__(self, replies):
        """`replies`: one callable per expected request, given the request body and
        returning the content blocks of the assistant's answer."""
        self.replies = list(replies)
        self.bodies: list[dict] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length))
                stub.bodies.append(body)
                if not stub.replies:
                    self.send_error(500, "no reply scripted for this request")
                    return
                content = stub.replies.pop(0)(body)
                uses = any(b["type"] == "tool_use" for b in content)
                message = {
                    "id": f"msg_{len(stub.bodies)}",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "claude"),
                    "content": content,
                    "stop_reason": "tool_use" if uses else "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                }
                if body.get("stream"):
                    answer = "".join(
                        f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events(message)
                    ).encode()
                    kind = "text/event-stream"
                else:
                    answer = json.dumps(message).encode()
                    kind = "application/json"
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def events(message: dict) -> list[dict]:
    """The Messages API's stream events of a whole message."""
    out = [{"type": "message_start", "message": {**message, "content": [], "stop_reason": None}}]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            out.append({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}})
            out.append({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            out.append({"type": "content_block_start", "index": i, "content_block": {**block, "input": {}}})
            out.append(
                {
                    "type": "content_block_delta",
                    "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                }
            )
        out.append({"type": "content_block_stop", "index": i})
    out.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": 1},
        }
    )
    out.append({"type": "message_stop"})
    return out


def tool_uses(*calls):
    """A scripted reply calling tools: (id, name, input) each."""
    return lambda _body: [
        {"type": "tool_use", "id": i, "name": n, "input": args} for i, n, args in calls
    ]


def text(t):
    return lambda _body: [{"type": "text", "text": t}]


def tool_results(body) -> dict:
    """The tool_result blocks of a request's last user message, by tool_use_id."""
    last = body["messages"][-1]
    assert last["role"] == "user", last
    return {b["tool_use_id"]: b for b in last["content"] if b.get("type") == "tool_result"}
