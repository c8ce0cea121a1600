"""A misbehaving MCP server over streamable HTTP for toolwire's tests, 2025-11-25 JSON-RPC
with the standard library only: its tool `work` answers with a 17 MiB text block, `fine`
with "fine". argv[1] is the port, argv[2] how the answer to a call comes:

  json   as the POST's application/json body
  sse    as one event of a text/event-stream body
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
MODE = sys.argv[2] if len(sys.argv) > 2 else "json"
SESSION = "bad-http-session"


def answer(msg):
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        return {"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bad-http", "version": "1"},
        }}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": mid, "result": {"tools": [
            {"name": "work", "description": "answers 17 MiB", "inputSchema": {"type": "object"}},
            {"name": "fine", "description": "answers", "inputSchema": {"type": "object"}},
        ]}}
    if method == "tools/call" and msg["params"]["name"] == "fine":
        return {"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "fine"}]}}
    if method == "tools/call":
        text = "x" * (17 * 1024 * 1024)
        return {"result": {"content": [{"type": "text", "text": text}]}, "jsonrpc": "2.0", "id": mid}
    return {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_args):
        pass

    def reply(self, status, body=b"", kind="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Mcp-Session-Id", SESSION)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        msg = json.loads(self.rfile.read(length))
        if msg.get("id") is None or "method" not in msg:
            self.reply(202)
            return
        body = json.dumps(answer(msg)).encode()
        if MODE == "sse" and msg["method"] == "tools/call":
            self.reply(200, b"event: message\ndata: " + body + b"\n\n", "text/event-stream")
        else:
            self.reply(200, body)

    def do_GET(self):
        self.reply(405)

    def do_DELETE(self):
        self.reply(200)


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
