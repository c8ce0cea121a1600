import type { ToolResult, Value } from './toolwire'
export type { ToolResult, Value } from './toolwire'

/** Every failure of this package: `code` says what kind (invalid_input, not_found, store, encode, render), the message what and where, as the toolwire CLI says it. */
export declare class ToolwireError extends Error {
  readonly code: 'invalid_input' | 'not_found' | 'store' | 'encode' | 'render'
}


/**
 * Which binding artifact the generated loader actually loaded: `'native'` for
 * a native addon, otherwise the `platformArchABI` of the WASI flavor. Every
 * flavor napi-rs can build is listed, because `NAPI_RS_NATIVE_LIBRARY_PATH`
 * can point the loader at a WASI artifact this package does not build itself.
 */
export declare const __napiBindingTarget: 'native' | 'wasm32-wasi' | 'wasm32-wasip1'

/**
 * The history and blob stores, where the `toolwire` binary keeps them: a data directory
 * (SQLite + blob files) or `databaseUrl` (sqlite:// or postgres://) and `blobUrl`
 * (file:// or s3://). Open one with `await Store.open({...})`; every method returns a
 * promise.
 */
export declare class Store {
  /** Opens (creating what is missing) the stores at `options`' place. */
  static open(options?: StoreOptions | undefined | null): Promise<Store>
  /** A new session; resolves to its id. */
  createSession(options?: SessionOptions | undefined | null): Promise<string>
  /** The stored sessions, newest first, as `toolwire sessions --json` lists them. */
  sessions(options?: PageOptions | undefined | null): Promise<Array<Record<string, unknown>>>
  /**
   * Stores a tool result in `session`: its media to the blob store, the result (with
   * blob references) to the history, as `toolwire normalize --store` does. Resolves to
   * the stored result.
   */
  persist(session: string, result: ToolResult): Promise<ToolResult>
  /**
   * Appends a message (`{role: "user", content: {text}}`, an assistant turn with its
   * tool calls, …) to `session`; resolves to the stored message.
   */
  append(session: string, message: Record<string, unknown>): Promise<Record<string, unknown>>
  /**
   * The session's messages in order, as `toolwire show --json` prints them; stored
   * images inline unless `inlineMedia: false`.
   */
  load(session: string, options?: LoadOptions | undefined | null): Promise<Array<Record<string, unknown>>>
  /**
   * The request body toolwire would send `provider` for a stored session, as
   * `toolwire export` prints it (stored media read from the blob store).
   */
  toModel(session: string, provider: string, options?: ModelOptions | undefined | null): Promise<Record<string, unknown> | [Record<string, unknown>, Array<Record<string, unknown>>]>
  /**
   * `readResult` over the result of `callId` stored in `session`, as a model's
   * `read_result` tool call reads it.
   */
  readResult(session: string, callId: string, options?: ReadOptions | undefined | null): Promise<string>
  /**
   * The bytes of a stored blob (`blake3:…`, as a stored result's image `source` names), as
   * a Buffer (a Uint8Array, so the types need no @types/node).
   */
  blob(key: string): Promise<Uint8Array>
}

export interface LoadOptions {
  /** Images stored as blobs (up to 8 MiB each) come back inline (default true). */
  inlineMedia?: boolean
}

export interface ModelOptions {
  /** The model (default: the provider's usual one); media is routed for it. */
  model?: string
  /** Characters per result, or a TruncationBudget object. */
  budget?: number | Record<string, unknown>
  /** A system prompt put first. */
  system?: string
  /** Return `[body, notes]`: the body and what encoding repaired or cut. */
  notes?: boolean
}

/**
 * The raw payload of one tool call → the canonical ToolResult, as `toolwire normalize`
 * prints it.
 */
export declare function normalize(raw: unknown, options?: NormalizeOptions | undefined | null): ToolResult

export interface NormalizeOptions {
  /** The tool's name (default: the payload's own `toolName`, else `tool`). */
  tool?: string
  /** The call's id (default: the payload's own `callId`, else `call_1`). */
  callId?: string
}

export interface PageOptions {
  /** At most this many (default 50). */
  limit?: number
  offset?: number
}

export interface ReadOptions {
  /** The output value to read (default 0). */
  part?: number
  /** The character offset to read from (default 0). */
  offset?: number
  /** At most this many characters (default: the engine's page). */
  limit?: number
  /** The lines matching this regular expression, instead of a page. */
  pattern?: string
  /** The value at this JSON pointer, instead of a page. */
  pointer?: string
}

/**
 * More of a result a model saw cut: the page a marker's `read_result {"callId", "part",
 * "offset"}` names, the value at a JSON `pointer`, or the lines matching `pattern`. The
 * `result` is the whole one (as normalized or stored), not the cut view.
 */
export declare function readResult(result: ToolResult, options?: ReadOptions | undefined | null): string

export interface RenderOptions {
  /** Columns (default 80). */
  width?: number
  /** ANSI colours (default false). */
  color?: boolean
  /** Every folded part drawn open (default false). */
  expand?: boolean
}

/**
 * A ToolResult, a Value or a list of them, rendered for a terminal `width` columns wide
 * as `toolwire render` draws it; ANSI colours when `color`, no images.
 */
export declare function renderTerminal(result: ToolResult | Value | Array<ToolResult | Value>, options?: RenderOptions | undefined | null): string

/** The JSON Schema (2020-12) of the ToolResult wire format, as `toolwire schema` prints. */
export declare function schema(): Record<string, unknown>

export interface SessionOptions {
  title?: string
  id?: string
}

export interface StoreOptions {
  /** SQLite + blob files here (default `$TOOLWIRE_DATA_DIR`, else the platform data dir). */
  dataDir?: string
  /** sqlite:// or postgres:// (instead of the data directory's SQLite). */
  databaseUrl?: string
  /** file:// or s3:// (instead of the data directory's blob files). */
  blobUrl?: string
}

/**
 * The request body (or, with `notes`, `[body, notes]`) toolwire would send `provider` for
 * a conversation or a list of results: calls and results paired, media routed for the
 * model, each result cut by structure to the budget with a marker that `readResult`
 * follows.
 */
export declare function toModel(messages: Array<ToolResult> | Array<Record<string, unknown>> | ToolResult, provider: 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini' | (string & {}), options?: ModelOptions | undefined | null): Record<string, unknown> | [Record<string, unknown>, Array<Record<string, unknown>>]

/**
 * The contract's violations of a ToolResult, one line each as `toolwire validate`
 * prints them; empty when it is valid. Something that is not a ToolResult at all throws.
 */
export declare function validate(result: ToolResult): Array<string>
