/**
 * TypeScript declarations for toolwire's wire format (`ToolResult` and everything in it).
 *
 * GENERATED FILE - DO NOT EDIT BY HAND.
 * Generated from schema/toolwire.schema.json by tests/web-types/gen.mjs
 * (json-schema-to-typescript 16.0.0). After changing the schema, run:
 *
 *   cd tests/web-types && node gen.mjs
 *
 * `tests/web-types/run` fails while this file is out of date.
 */

/**
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Status".
 */
export type Status = "success" | "error" | "suspended";
/**
 * A semantic value: a `kind`, its `data`, and optional hints. `data` is kept as JSON so
 * that custom kinds and extra fields of well-known kinds survive untouched; typed,
 * borrowing access is in [`crate::view`].
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Value".
 */
export type Value = {
  kind: Kind;
  data: unknown;
  /**
   * One line for compact display; always shown in a renderer's header.
   */
  summary?: string | null;
  mimeType?: string | null;
  display?: DisplayHints | null;
  annotations?: Annotations | null;
  /**
   * MCP `_meta` of the block this value came from, kept verbatim.
   */
  _meta?: {
    [k: string]: unknown;
  } | null;
};
/**
 * A value's kind. Deserializing accepts any string so that a bad kind reaches
 * [`crate::validate`] and is reported with its path instead of failing the whole parse.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Kind".
 */
export type Kind = string;
/**
 * The generic views, used for kinds a renderer does not know.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "View".
 */
export type View = "text" | "markdown" | "code" | "diff" | "table" | "tree" | "image" | "raw" | "hidden";
/**
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Audience".
 */
export type Audience = "user" | "assistant";
/**
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "SuspensionReason".
 */
export type SuspensionReason = "approval" | "input";
/**
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "ResourceKind".
 */
export type ResourceKind = "image" | "audio" | "video" | "binary";
/**
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "EntryType".
 */
export type EntryType = "file" | "directory" | "symlink";
/**
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "ColumnType".
 */
export type ColumnType = "string" | "number" | "boolean" | "date";
/**
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Align".
 */
export type Align = "left" | "center" | "right";
/**
 * The bytes of an image or file. Exactly one of the three forms; `normalize` produces
 * `Base64`, `persist` turns large ones into `Blob`.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Source".
 */
export type Source =
  | {
      base64: string;
    }
  | {
      /**
       * `blake3:` followed by 64 lowercase hex characters.
       */
      blob: string;
      size: number;
    }
  | {
      url: string;
    };
/**
 * What an audio, video, document or other binary `file` value holds.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "MediaKind".
 */
export type MediaKind = "audio" | "video" | "document" | "binary";
/**
 * One thing that happened in a session.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Event".
 */
export type Event = {
  sessionId: string;
  /**
   * 1, 2, 3, ... per session, without gaps; assigned when the event is logged.
   */
  seq: number;
  /**
   * RFC 3339.
   */
  at: string;
} & (
  | {
      type: "session_started";
      parentCallId?: string | null;
    }
  | {
      type: "session_ended";
    }
  | {
      type: "turn_started";
      turn: number;
    }
  | {
      type: "turn_ended";
      turn: number;
    }
  | {
      type: "assistant_delta";
      text: string;
    }
  | {
      type: "tool_call_started";
      callId: string;
      toolName: string;
      input: unknown;
    }
  | {
      type: "progress";
      callId: string;
      done: number;
      total?: number | null;
      message?: string | null;
    }
  | {
      type: "tool_result";
      result: ToolResult;
      raw?: unknown;
    }
  | {
      type: "widget";
      callId: string;
      widget: Widget;
    }
  | {
      type: "suspended";
      callId: string;
      suspension: Suspension;
    }
  | {
      type: "resolved";
      callId: string;
      suspensionId: string;
      resolution: Answered;
    }
);
/**
 * How a suspended call was answered, as a `resolved` event says it.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Answered".
 */
export type Answered = "approved" | "denied" | "answered" | "cancelled";
/**
 * A session id: 1 to 256 letters, digits, `-`, `.`, `_` or `~`, without `..`.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "SessionId".
 */
export type SessionId = string;

/**
 * One result per tool call.
 */
export interface ToolResult {
  callId: string;
  toolName: string;
  status: Status;
  /**
   * Ordered values; a success has at least one.
   */
  output?: Value[];
  /**
   * Present exactly when `status` is `error`.
   */
  error?: ErrorInfo | null;
  /**
   * Present exactly when `status` is `suspended`.
   */
  suspension?: Suspension | null;
  /**
   * Display-only; never sent to a model (docs/contracts.md, "Display widgets").
   */
  widgets?: Widget[];
  /**
   * Index of the blobs that `output` values reference (docs/contracts.md, "Media
   * persistence and rehydration").
   */
  resources?: Resource[];
  metadata?: Metadata;
}
/**
 * Hints a UI may honour; every field is optional and a UI that ignores them still works.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "DisplayHints".
 */
export interface DisplayHints {
  preferredView?: View | null;
  /**
   * Language for code highlighting, e.g. `rust`.
   */
  language?: string | null;
  collapsed?: boolean | null;
  /**
   * Lines (terminal) or pixels (browser) before the view is cut or scrolls.
   */
  maxHeight?: number | null;
  /**
   * Higher is more prominent; values of one result are shown in descending priority.
   */
  priority?: number | null;
}
/**
 * MCP annotations on a content block.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Annotations".
 */
export interface Annotations {
  /**
   * Who the value is for. `["user"]` keeps it from the model; `["assistant"]` from the person.
   */
  audience?: Audience[] | null;
  /**
   * MCP importance, 0.0 (optional) to 1.0 (required).
   */
  priority?: number | null;
  lastModified?: string | null;
  [k: string]: unknown;
}
/**
 * Why a call failed. `message` is for the model and the person alike.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "ErrorInfo".
 */
export interface ErrorInfo {
  message: string;
  /**
   * A stable machine-readable code, e.g. `timeout`, `invalid_input`, `denied`.
   */
  code?: string | null;
  details?: unknown;
}
/**
 * A call waiting on a person: an approval, or an answer to a blocking tool.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Suspension".
 */
export interface Suspension {
  id: string;
  reason: SuspensionReason;
  /**
   * What the person is asked.
   */
  prompt: string;
  /**
   * JSON Schema of the expected answer, for `input` suspensions.
   */
  inputSchema?: unknown;
}
/**
 * A display-only output for the person. Never sent to the model: the model already has
 * the tool's `output`. `fallback` is what any consumer without a renderer shows.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Widget".
 */
export interface Widget {
  /**
   * Widget type identifier, e.g. `weather-forecast`.
   */
  widget: string;
  data: unknown;
  /**
   * Plain text for consumers that cannot render the widget; never empty.
   */
  fallback: string;
  /**
   * Set when the widget is an MCP Apps / MCP-UI `ui://` HTML resource.
   */
  app?: WidgetApp | null;
}
/**
 * An MCP App: HTML that a browser must run sandboxed, in an origin that is not the app's
 * own (docs/contracts.md, "Invariants", 5).
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "WidgetApp".
 */
export interface WidgetApp {
  /**
   * A `ui://` URI.
   */
  uri: string;
  mimeType?: string | null;
  /**
   * The HTML, when the tool embedded it or the host read it.
   */
  html?: string | null;
  /**
   * The resource's `_meta.ui.csp`: the origins it may reach, which the host's sandbox
   * turns into its Content-Security-Policy.
   */
  csp?: unknown;
  /**
   * The resource's `_meta.ui.permissions` (camera, microphone, ...), granted only if
   * the host agrees.
   */
  permissions?: unknown;
}
/**
 * One externalized blob that an `output` value references, so a consumer can list or
 * prefetch media without walking every value.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Resource".
 */
export interface Resource {
  /**
   * The blob key, `blake3:<hex>`.
   */
  uri: string;
  kind: ResourceKind;
  mimeType: string;
  size: number;
  filename?: string | null;
}
/**
 * Timing, provenance and any other metadata; unknown keys are kept in `extra`.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Metadata".
 */
export interface Metadata {
  sources?: unknown[] | null;
  /**
   * RFC 3339.
   */
  startedAt?: string | null;
  /**
   * RFC 3339.
   */
  endedAt?: string | null;
  durationMs?: number | null;
  /**
   * Milliseconds the call waited for a person (an approval, an answer) before it ran
   * on; not part of `durationMs`, which is the time after the last answer.
   */
  waitedMs?: number | null;
  /**
   * Blob key of the raw payload as the tool sent it (an MCP result), kept when it is
   * at most 1 MiB of JSON (any size with `TOOLWIRE_DEBUG_TOOL_RESULT_RAW=1`).
   */
  rawRef?: string | null;
  [k: string]: unknown;
}
/**
 * `text`: plain text or markdown (the value's `mimeType` says which).
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "TextData".
 */
export interface TextData {
  content: string;
}
/**
 * `diff`: a file change. `hunks` is optional because `original`/`modified` carry it all.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "DiffData".
 */
export interface DiffData {
  path: string;
  original?: string | null;
  modified: string;
  isNew: boolean;
  hunks?: DiffHunk[] | null;
}
/**
 * One hunk of a structured diff, as jsdiff's `structuredPatch` writes it: each line
 * starts with ` `, `+` or `-`.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "DiffHunk".
 */
export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}
/**
 * `file_content`: the text of one file. `size` is the file's size in bytes.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "FileContentData".
 */
export interface FileContentData {
  path: string;
  content: string;
  size: number;
  encoding?: string | null;
}
/**
 * `file_list`: a directory listing.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "FileListData".
 */
export interface FileListData {
  path: string;
  entries: FileEntry[];
  /**
   * True when the listing stopped before the end of the directory.
   */
  truncated?: boolean | null;
}
/**
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "FileEntry".
 */
export interface FileEntry {
  name: string;
  type: EntryType;
  size?: number | null;
  /**
   * RFC 3339 timestamp.
   */
  modified?: string | null;
}
/**
 * `table`: columns, and rows as objects keyed by column key.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "TableData".
 */
export interface TableData {
  columns: Column[];
  rows: {
    [k: string]: unknown;
  }[];
}
/**
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Column".
 */
export interface Column {
  key: string;
  label?: string | null;
  type?: ColumnType | null;
  align?: Align | null;
}
/**
 * `image`: the value's `mimeType` is `image/*`.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "ImageData".
 */
export interface ImageData {
  source: Source;
  alt?: string | null;
}
/**
 * `file`: audio, video, a document or other binary content.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "FileData".
 */
export interface FileData {
  source: Source;
  mediaKind: MediaKind;
  filename?: string | null;
}
/**
 * `resource_link`: a pointer to a resource the tool did not inline (MCP `resource_link`).
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "ResourceLinkData".
 */
export interface ResourceLinkData {
  uri: string;
  name?: string | null;
  description?: string | null;
  size?: number | null;
}

/**
 * The `data` type of each well-known kind, from the `if`/`then` rules on `Value` in the
 * schema (`Value.data` itself is `unknown`: custom kinds carry any JSON). A well-known
 * kind's `data` may carry extra fields; they are kept on the wire but not declared here.
 */
export interface KnownKindData {
  text: TextData;
  diff: DiffData;
  file_content: FileContentData;
  file_list: FileListData;
  table: TableData;
  image: ImageData;
  file: FileData;
  resource_link: ResourceLinkData;
}
/**
 * A `Value` of a well-known kind, with `data` typed; narrow it with `switch (value.kind)`.
 * A `Value` from the wire is not checked: test `kind` before treating it as a `KnownValue`.
 */
export type KnownValue = {
  [K in keyof KnownKindData]: Value & {kind: K; data: KnownKindData[K]};
}[keyof KnownKindData];
/**
 * The well-known kinds that have a typed `data`.
 */
export type KnownKind = keyof KnownKindData;
