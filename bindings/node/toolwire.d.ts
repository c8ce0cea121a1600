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
 * How a call ended, or that it has not ended yet.
 *
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
  /**
   * The payload, in the shape the kind defines; kept as JSON so nothing is lost.
   */
  data: unknown;
  /**
   * One line for compact display; always shown in a renderer's header.
   */
  summary?: string | null;
  /**
   * The MIME type of the content, e.g. `text/markdown` or `image/png`.
   */
  mimeType?: string | null;
  /**
   * How the value asks to be shown.
   */
  display?: DisplayHints | null;
  /**
   * MCP annotations: who the value is for, and its importance.
   */
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
 * `validate()` and is reported with its path instead of failing the whole parse.
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
 * Who a value is meant for (MCP's `Role`).
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Audience".
 */
export type Audience = "user" | "assistant";
/**
 * What a suspended call waits for.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "SuspensionReason".
 */
export type SuspensionReason = "approval" | "input";
/**
 * What an externalized blob holds.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "ResourceKind".
 */
export type ResourceKind = "image" | "audio" | "video" | "binary";
/**
 * What an entry of a listing is.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "EntryType".
 */
export type EntryType = "file" | "directory" | "symlink";
/**
 * How a column's cells are read: for sorting and alignment.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "ColumnType".
 */
export type ColumnType = "string" | "number" | "boolean" | "date";
/**
 * How a column's cells are aligned.
 *
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
      /**
       * Standard-alphabet base64, padding optional.
       */
      base64: string;
    }
  | {
      /**
       * `blake3:` followed by 64 lowercase hex characters.
       */
      blob: string;
      /**
       * The decoded size in bytes.
       */
      size: number;
    }
  | {
      /**
       * An `http(s):` or `data:` URL.
       */
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
  /**
   * The session the event belongs to.
   */
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
      /**
       * The `task` call whose subagent runs in this session.
       */
      parentCallId?: string | null;
    }
  | {
      type: "session_ended";
    }
  | {
      type: "turn_started";
      /**
       * The turn's number within the session, from 1.
       */
      turn: number;
    }
  | {
      type: "turn_ended";
      /**
       * The turn's number within the session, from 1.
       */
      turn: number;
    }
  | {
      type: "assistant_delta";
      /**
       * The new text, to append to what came before.
       */
      text: string;
    }
  | {
      type: "tool_call_started";
      /**
       * The call's id.
       */
      callId: string;
      /**
       * The tool it runs.
       */
      toolName: string;
      /**
       * The input it was given.
       */
      input: unknown;
      /**
       * Set when a person made the call, not the model (the call's own `byPerson`):
       * a page watching the session learns it as the call starts, as one that loads
       * the stored call does (the web app folds an MCP App's polls by it).
       */
      byPerson?: ByPerson | null;
    }
  | {
      type: "progress";
      /**
       * The call's id.
       */
      callId: string;
      /**
       * Units of work done so far.
       */
      done: number;
      /**
       * Units in all, when the tool knows.
       */
      total?: number | null;
      /**
       * What it is doing now.
       */
      message?: string | null;
    }
  | {
      type: "tool_result";
      result: ToolResult;
      /**
       * The tool's payload before normalizing.
       */
      raw?: unknown;
    }
  | {
      type: "widget";
      /**
       * The call that pushed the widget.
       */
      callId: string;
      widget: Widget;
    }
  | {
      type: "suspended";
      /**
       * The paused call's id.
       */
      callId: string;
      suspension: Suspension;
    }
  | {
      type: "resolved";
      /**
       * The resumed call's id.
       */
      callId: string;
      /**
       * The suspension that was answered.
       */
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
  /**
   * The id of the call this answers; equal to the call's.
   */
  callId: string;
  /**
   * The tool that was called.
   */
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
  /**
   * The generic view to use when the renderer does not know the kind.
   */
  preferredView?: View | null;
  /**
   * Language for code highlighting, e.g. `rust`.
   */
  language?: string | null;
  /**
   * Start folded: shown as a one-line summary until opened.
   */
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
  /**
   * When the content last changed (ISO 8601), as MCP's `lastModified`.
   */
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
  /**
   * What went wrong, in words the model and the person both read.
   */
  message: string;
  /**
   * A stable machine-readable code, e.g. `timeout`, `invalid_input`, `denied`.
   */
  code?: string | null;
  /**
   * Structured detail for programs (e.g. schema violations); never needed to understand `message`.
   */
  details?: unknown;
}
/**
 * A call waiting on a person: an approval, or an answer to a blocking tool.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Suspension".
 */
export interface Suspension {
  /**
   * Unique id; the answer names it.
   */
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
  /**
   * The widget's data, in the shape its renderer expects.
   */
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
  /**
   * The MIME type of the HTML resource (MCP Apps: `text/html;profile=mcp-app`).
   */
  mimeType?: string | null;
  /**
   * The HTML, when the tool embedded it or the host read it and it is not stored yet
   * (results stored before `html_blob` existed keep it here too).
   */
  html?: string | null;
  /**
   * The stored HTML's blob key (`blake3:…`), in place of `html`: an app's page is
   * kept once, by its content, not again in every result it shows (a PDF viewer's
   * is 4.4 MB).
   */
  htmlBlob?: string | null;
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
  /**
   * The blob's MIME type.
   */
  mimeType: string;
  /**
   * The blob's size in bytes.
   */
  size: number;
  /**
   * The file name it came with, if any.
   */
  filename?: string | null;
}
/**
 * Timing, provenance and any other metadata; unknown keys are kept in `extra`.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Metadata".
 */
export interface Metadata {
  /**
   * Where the output came from (URLs, files), as the tool listed them.
   */
  sources?: unknown[] | null;
  /**
   * RFC 3339.
   */
  startedAt?: string | null;
  /**
   * RFC 3339.
   */
  endedAt?: string | null;
  /**
   * Milliseconds the call ran, from start to end.
   */
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
 * One entry of a `file_list`.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "FileEntry".
 */
export interface FileEntry {
  /**
   * The entry's name within the listed directory (not a full path).
   */
  name: string;
  type: EntryType;
  /**
   * Size in bytes; directories usually leave it out.
   */
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
 * One column of a `table`: the row key it reads, and how to show it.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "Column".
 */
export interface Column {
  /**
   * The key of each row object this column shows.
   */
  key: string;
  /**
   * The heading; the key when absent.
   */
  label?: string | null;
  /**
   * How to read and sort the cells; inferred from them when absent.
   */
  type?: ColumnType | null;
  /**
   * Cell alignment; numbers go right when absent.
   */
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
  /**
   * Where the resource is (any URI; `toolwire-blob:` for a stored blob).
   */
  uri: string;
  /**
   * A human name for the resource.
   */
  name?: string | null;
  /**
   * What the resource holds, as its server described it.
   */
  description?: string | null;
  /**
   * Its size in bytes, when known.
   */
  size?: number | null;
}
/**
 * How a person made a call.
 *
 * This interface was referenced by `ToolResult`'s JSON-Schema
 * via the `definition` "ByPerson".
 */
export interface ByPerson {
  /**
   * Where they asked: `cli`, `web`, `api`, or `app:TOOL` (the view of tool TOOL's
   * MCP App, on their screen).
   */
  via: string;
  /**
   * The call was an MCP App's own, of a tool only apps may call (its `visibility`
   * leaves out `"model"`): kept in the record for people, left out of every model
   * view. MCP Apps keeps such tools and their results from the model, and a monitor
   * app polling every 2 s would otherwise put a turn in the model's context each time.
   */
  appOnly?: boolean;
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
