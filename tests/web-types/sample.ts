// Type-checked by `node gen.mjs --check` (tsc --noEmit --strict) against the generated
// web/toolwire.d.ts, so that a wrong or too-loose generation fails the check. Not run.
//
// The results below are what toolwire produces from fixtures in tests/fixtures: the MCP
// reference server's `get-tiny-image` / `get-resource-links` calls (tests/fixtures/mcp) and
// ART's suspended and failed calls (tests/fixtures/legacy/art-suspended.json,
// art-error.json), written in the canonical shape of schema/toolwire.schema.json.

import type {KnownValue, ToolResult, Value} from "../../web/toolwire.d.ts";

const BLOB = "blake3:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

// tests/fixtures/mcp/get-tiny-image.json, normalized and with the image persisted as a blob.
export const tinyImage: ToolResult = {
  callId: "call_01",
  toolName: "get-tiny-image",
  status: "success",
  output: [
    {kind: "text", data: {content: "Here's the image you requested:"}},
    {
      kind: "image",
      mimeType: "image/png",
      data: {source: {blob: BLOB, size: 2828}, alt: null},
      display: {preferredView: "image", maxHeight: 240, priority: 1},
      annotations: {audience: ["user"], priority: 0.5},
    },
    {kind: "text", data: {content: "The image above is the MCP logo."}, summary: null},
  ],
  resources: [{uri: BLOB, kind: "image", mimeType: "image/png", size: 2828}],
  widgets: [],
  metadata: {
    durationMs: 12,
    startedAt: "2026-05-01T09:30:00Z",
    endedAt: "2026-05-01T09:30:00.012Z",
    // Metadata is open: unknown keys are kept.
    traceId: "trace-19",
  },
};

// tests/fixtures/mcp/get-resource-links.json (first link), plus a display-only widget.
export const resourceLinks: ToolResult = {
  callId: "call_02",
  toolName: "get-resource-links",
  status: "success",
  output: [
    {kind: "text", data: {content: "Here are 3 resource links to resources available in this server:"}},
    {
      kind: "resource_link",
      mimeType: "text/plain",
      data: {uri: "demo://resource/dynamic/blob/1", name: "Blob Resource 1", description: "Resource 1: plaintext resource"},
      _meta: {"io.example/origin": "server-everything"},
    },
  ],
  widgets: [
    {
      widget: "mcp_app",
      data: {links: 3},
      fallback: "3 resource links",
      app: {uri: "ui://links/list", mimeType: "text/html;profile=mcp-app", html: "<ul></ul>", csp: {connectDomains: []}},
    },
  ],
};

// tests/fixtures/legacy/art-suspended.json and art-error.json, normalized.
export const suspended: ToolResult = {
  callId: "call_7f3c",
  toolName: "delete_branch",
  status: "suspended",
  output: [],
  suspension: {id: "susp_42", reason: "approval", prompt: "Delete branch feature/login on origin?"},
};
export const failed: ToolResult = {
  callId: "call_7f3b",
  toolName: "web_search",
  status: "error",
  error: {message: "Search provider returned HTTP 503", code: "unavailable", details: {httpStatus: 503}},
};

// The well-known kinds narrow `data` by `kind`.
export function describe(value: KnownValue): string {
  switch (value.kind) {
    case "text":
      return value.data.content;
    case "diff":
      return `${value.data.path}: ${value.data.hunks?.reduce((n, h) => n + h.lines.length, 0) ?? 0} lines`;
    case "file_list":
      return value.data.entries.map((e) => `${e.name}${e.type === "directory" ? "/" : ""}`).join("\n");
    case "table":
      return value.data.columns.map((c) => c.label ?? c.key).join(" | ");
    case "image":
    case "file": {
      const s = value.data.source;
      return "blob" in s ? `${s.blob} (${s.size} bytes)` : "url" in s ? s.url : `${s.base64.length} base64 chars`;
    }
    default:
      return value.kind;
  }
}
export const diff: KnownValue = {
  kind: "diff",
  summary: "+2 -1 lines",
  data: {
    path: "src/config.ts",
    original: "export const port = 3000;\n",
    modified: "export const port = 8080;\nexport const host = '0.0.0.0';\n",
    isNew: false,
    hunks: [{oldStart: 1, oldLines: 1, newStart: 1, newLines: 2, lines: ["-export const port = 3000;", "+export const port = 8080;", "+export const host = '0.0.0.0';"]}],
  },
};
// A custom kind: any data.
export const custom: Value = {kind: "git.status", data: {branch: "main", ahead: 1}};

// What must NOT type-check. Each `@ts-expect-error` fails the check if the line compiles,
// e.g. when a type comes out as `any` or an object type loses its closedness.
export const bad: ToolResult[] = [
  // @ts-expect-error: `status` is an enum
  {callId: "c", toolName: "t", status: "ok"},
  // @ts-expect-error: `toolName` is required
  {callId: "c", status: "success"},
  // @ts-expect-error: ToolResult is closed; a misspelt key is caught
  {callId: "c", toolName: "t", status: "success", tool_name: "t"},
  // @ts-expect-error: `data` is required on a value
  {callId: "c", toolName: "t", status: "success", output: [{kind: "text"}]},
  // @ts-expect-error: ResourceKind has no "document"
  {callId: "c", toolName: "t", status: "success", resources: [{uri: BLOB, kind: "document", mimeType: "application/pdf", size: 1}]},
  // @ts-expect-error: `preferredView` is a View
  {callId: "c", toolName: "t", status: "success", output: [{kind: "text", data: {content: ""}, display: {preferredView: "html"}}]},
  // @ts-expect-error: a suspension needs a `prompt`
  {callId: "c", toolName: "t", status: "suspended", suspension: {id: "s", reason: "approval"}},
  // @ts-expect-error: a widget needs a `fallback`
  {callId: "c", toolName: "t", status: "success", widgets: [{widget: "w", data: null}]},
];
// @ts-expect-error: a text value's data is {content}
export const badText: KnownValue = {kind: "text", data: {text: "hi"}};
// @ts-expect-error: a source needs one of base64 / blob+size / url
export const badImage: KnownValue = {kind: "image", data: {source: {blob: BLOB}}};
// @ts-expect-error: hunk numbers are numbers
export const badHunk: KnownValue = {kind: "diff", data: {path: "p", modified: "", isNew: true, hunks: [{oldStart: "1", oldLines: 0, newStart: 1, newLines: 0, lines: []}]}};
