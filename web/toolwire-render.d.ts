// Types of toolwire-render.js, the browser renderer for ToolResult values (written by
// hand beside the module; the wire types are generated into toolwire.d.ts). Checked by
// tests/web-types (tsc --strict) against render-sample.ts.

import type { ToolResult, Value, Widget } from "./toolwire.d.ts";

/** A `resources/read` answer: MCP's `{contents: [...]}`. */
export interface ReadAnswer {
  contents: object[];
}

export interface RenderOptions {
  /** The URL of a stored blob (`blake3:…`), or null when it has none here. */
  resourceUrl?: (blob: string) => string | null;
  /** toolwire's sandbox proxy (another origin, serving `/sandbox`), where SVG is drawn. */
  sandboxOrigin?: string;
  /** Gives resource links a Read button that draws what this returns. */
  readResource?: (uri: string) => Promise<ReadAnswer>;
  /** An answer read earlier (kept with the result), drawn at once. */
  wasRead?: (uri: string) => ReadAnswer | null | undefined;
  /** Anything else a registered renderer or widget wants. */
  [key: string]: unknown;
}

/** Renders `result` into `el`, replacing what was there. */
export function renderResult(el: HTMLElement, result: ToolResult, opts?: RenderOptions): void;
/** One value with its header, hints and audience. */
export function renderValue(value: Value, opts?: RenderOptions): HTMLElement;
/** A widget: its registered renderer, else its fallback text. */
export function renderWidget(widget: Widget, opts?: RenderOptions): HTMLElement;
/** Draws values of `kind` with `fn` instead of the built-in view. */
export function registerRenderer(kind: string, fn: (el: HTMLElement, value: Value, opts: RenderOptions) => void): void;
/** Draws widgets named `id` with `fn`; others show their fallback text. */
export function registerWidget(id: string, fn: (el: HTMLElement, widget: Widget, opts: RenderOptions) => void): void;
/** A collapsible tree of any JSON value, with expand all, find, copy JSON and copy path. */
export function tree(value: unknown): HTMLElement;
/** `$.a.b[2]["odd key"]`: a path of keys as text. */
export function pathText(keys: Array<string | number>): string;
/** A size in bytes for people: 812 B, 4.2 kB, 1.3 MB. */
export function bytes(n: number): string;
/** An element with attributes and children; strings become text nodes, never markup. */
export function h(tag: string, attrs?: Record<string, unknown>, ...children: unknown[]): HTMLElement;
