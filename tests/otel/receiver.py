"""A loopback OTLP/HTTP trace receiver for crates/toolwire/tests/otel.rs: it decodes every
POST to /v1/traces with the official `opentelemetry-proto` package (pinned in
requirements.txt) and appends each span, as decoded, to a JSON-lines file.

OTLP/JSON differs from protobuf's canonical JSON mapping in one way the specification
names: trace and span ids are hex, not base64. They are converted back before parsing;
everything else must parse strictly (an unknown or misspelt field fails the request with
400 and is written to the file as an error, so the test sees it).

Run: venv/bin/python receiver.py OUT.jsonl   (prints the port it listens on)
"""

import base64
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

OUT = sys.argv[1]


def hex_ids_to_base64(request):
    for rs in request.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
                for link in span.get("links", []):
                    for key in ("traceId", "spanId"):
                        if key in link:
                            link[key] = base64.b64encode(bytes.fromhex(link[key])).decode()
    return request


def any_value(v):
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [any_value(x) for x in v.array_value.values]
    if kind == "int_value":
        return {"int": v.int_value}
    return getattr(v, kind) if kind else None


def record(line):
    with open(OUT, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.path != "/v1/traces":
            self.send_response(404)
            self.end_headers()
            return
        try:
            if self.headers.get("content-type", "").startswith("application/json"):
                request = json_format.Parse(
                    json.dumps(hex_ids_to_base64(json.loads(body))), ExportTraceServiceRequest()
                )
            else:
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
        except Exception as e:  # noqa: BLE001 - any decode failure is the test's finding
            record({"error": f"{type(e).__name__}: {e}"})
            self.send_response(400)
            self.end_headers()
            return
        for rs in request.resource_spans:
            resource = {a.key: any_value(a.value) for a in rs.resource.attributes}
            for ss in rs.scope_spans:
                for s in ss.spans:
                    record(
                        {
                            "resource": resource,
                            "scope": ss.scope.name,
                            "traceId": s.trace_id.hex(),
                            "spanId": s.span_id.hex(),
                            "parentSpanId": s.parent_span_id.hex(),
                            "name": s.name,
                            "kind": s.kind,
                            "start": s.start_time_unix_nano,
                            "end": s.end_time_unix_nano,
                            "attributes": {a.key: any_value(a.value) for a in s.attributes},
                            "events": [e.name for e in s.events],
                            "status": {"code": s.status.code, "message": s.status.message},
                            "headers": {"x-test": self.headers.get("x-test")},
                        }
                    )
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
