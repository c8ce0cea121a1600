//! toolwire's browser renderer for ToolResult values, usable in any page:
//! `renderResult(el, result, {resourceUrl, sandboxOrigin, readResource})`, `registerRenderer(kind, fn)`,
//! `registerWidget(id, fn)`. The dispatch is the terminal's: a registered renderer for the
//! kind, else `display.preferredView`, else the well-known kind, else the MIME type, else a
//! JSON tree. Everything in a result is untrusted: it reaches the page as text nodes,
//! through DOMPurify (markdown), or as a URL of this origin for passive media only; never
//! as markup, and never as a URL of this origin that could open as a document (SVG is drawn
//! on the sandbox origin, see `svgImage`).
//!
//! Hooks for tests and styles: every value's root has `class="tw-value"` and `data-kind`;
//! `data-view` says which view drew it; tables have `data-role="filter"` and header cells
//! `data-role="sort"`; diffs a `data-role="diff-toggle"` button and `data-mode`; JSON trees
//! `details.tw-node`; download cards `.tw-download`; assistant-only values sit in
//! `details.tw-assistant-only`.
//!
//! This module is the entry and the dispatch; each kind is drawn by a module of its own
//! under `render/` (text, markdown, code, diff, table, image, file, link, tree; `util` is
//! what they share), as the terminal renderer's `kinds/`. Ship `web/` as the package:
//! `package.json`, these modules, `vendor/`, the CSS and the types
//! (`toolwire-render.d.ts`, `toolwire.d.ts`).

import { code, fileContent } from './render/code.js';
import { diff } from './render/diff.js';
import { file } from './render/file.js';
import { image } from './render/image.js';
import { resourceLink } from './render/link.js';
import { markdown } from './render/markdown.js';
import { fileList, records, table } from './render/table.js';
import { plain } from './render/text.js';
import { tree } from './render/tree.js';
import { h } from './render/util.js';
export { h, bytes } from './render/util.js';
export { tree, pathText } from './render/tree.js';

/** @typedef {import('./toolwire.d.ts').ToolResult} ToolResult */

const renderers = new Map();
const widgets = new Map();

/** Draws values of `kind` with `fn(el, value, opts)` instead of the built-in view. */
export function registerRenderer(kind, fn) {
  renderers.set(String(kind), fn);
}

/** Draws widgets named `id` with `fn(el, widget, opts)`; others show their fallback text. */
export function registerWidget(id, fn) {
  widgets.set(String(id), fn);
}

/**
 * Renders `result` into `el`, replacing what was there.
 * @param {HTMLElement} el
 * @param {ToolResult} result
 * @param {{resourceUrl?: (blob: string) => string|null, sandboxOrigin?: string, readResource?: (uri: string) => Promise<{contents: object[]}>, wasRead?: (uri: string) => {contents: object[]}|null|undefined}} [opts]
 *   `resourceUrl` names a stored blob's URL; `sandboxOrigin` is toolwire's sandbox proxy
 *   (another origin, `/sandbox`), where inline SVG is drawn; `readResource`, when given,
 *   gives resource links a Read button that draws the MCP `resources/read` answer;
 *   `wasRead` gives an answer read earlier (kept with the result), drawn at once.
 */
export function renderResult(el, result, opts = {}) {
  el.replaceChildren();
  const root = h('div', { class: 'tw-result', 'data-status': (result && result.status) || '' });
  el.append(root);
  if (!result || typeof result !== 'object') {
    root.append(h('p', { class: 'tw-note' }, 'not a tool result'));
    return;
  }
  if (result.error && result.error.code === 'cancelled') {
    // A cancel is no failure: said plainly, not as an alert (its message often begins
    // with the word already: "cancelled: interrupted before completion").
    const message = String(result.error.message || '');
    root.append(h('p', { class: 'tw-cancelled' }, /^cancel/i.test(message)
      ? `${message.charAt(0).toUpperCase()}${message.slice(1)}` : `Cancelled${message ? `: ${message}` : ''}`));
  } else if (result.error) {
    root.append(h('div', { class: 'tw-error', role: 'alert' },
      result.error.code ? h('code', {}, result.error.code) : null, ' ', String(result.error.message || '')));
  }
  if (result.suspension) {
    root.append(h('p', { class: 'tw-suspension' }, String(result.suspension.prompt || '')));
  }
  const values = (Array.isArray(result.output) ? result.output : [])
    .map((v, i) => [v, i])
    .filter(([v]) => v && (v.display || {}).preferredView !== 'hidden')
    .sort(([a, i], [b, j]) => ((b.display || {}).priority || 0) - ((a.display || {}).priority || 0) || i - j)
    .map(([v]) => v);
  for (const v of values) root.append(renderValue(v, opts));
  for (const w of Array.isArray(result.widgets) ? result.widgets : []) root.append(renderWidget(w, opts));
}

/** One value with its header, hints and audience. */
export function renderValue(v, opts = {}) {
  const display = v.display || {};
  const kind = typeof v.kind === 'string' ? v.kind : 'unknown';
  const body = h('div', { class: 'tw-body' });
  const root = h('section', { class: 'tw-value', 'data-kind': kind });
  try {
    const custom = renderers.get(kind);
    if (custom) {
      body.dataset.view = 'custom';
      custom(body, v, opts);
    } else {
      body.dataset.view = draw(body, v, opts);
    }
  } catch (err) {
    body.replaceChildren(h('p', { class: 'tw-note' }, `cannot show this ${kind} value (${err.message}); its data:`), tree(v.data));
    body.dataset.view = 'tree';
  }
  if (typeof display.maxHeight === 'number' && display.maxHeight > 0) {
    body.classList.add('tw-capped');
    body.style.maxHeight = `${Math.min(display.maxHeight, 10000) * 1.4}em`;
  }
  const title = v.summary ? String(v.summary) : kind;
  let shown;
  if (display.collapsed) {
    shown = h('details', { class: 'tw-collapsed' }, h('summary', {}, title), body);
  } else {
    shown = h('div', {}, v.summary ? h('div', { class: 'tw-summary' }, String(v.summary)) : null, body);
  }
  const audience = v.annotations && Array.isArray(v.annotations.audience) ? v.annotations.audience : null;
  if (audience && audience.length && !audience.includes('user')) {
    // Meant for the model only: kept, behind a toggle.
    root.append(h('details', { class: 'tw-assistant-only' }, h('summary', {}, `for the model: ${title}`), shown));
  } else {
    root.append(shown);
  }
  return root;
}

function isMarkdownMime(m) {
  return typeof m === 'string' && m.split(';')[0].trim().toLowerCase() === 'text/markdown';
}

/** Whether a value says its text is markdown: by `mimeType`, or by the display hint's
 * `language` (`markdown`, `md`), which tools set when they have no MIME type to give. */
function declaresMarkdown(v) {
  const language = String((v.display || {}).language || '').toLowerCase();
  return isMarkdownMime(v.mimeType) || language === 'markdown' || language === 'md';
}

/** Chooses and draws a view; returns its name. */
function draw(el, v, opts) {
  const data = v.data;
  const view = (v.display || {}).preferredView;
  const text = data && typeof data === 'object' && typeof (data.content ?? data.text) === 'string' ? (data.content ?? data.text) : null;
  switch (view) {
    case 'markdown': if (text !== null) return markdown(el, text); break;
    case 'code': if (text !== null) return code(el, text, (v.display || {}).language); break;
    case 'text': if (text !== null) return plain(el, text); break;
    case 'diff': if (data && typeof data.modified === 'string') return diff(el, data); break;
    case 'table': if (data && Array.isArray(data.rows)) return table(el, data); break;
    case 'image': if (data && data.source) return image(el, data, v.mimeType, opts); break;
    case 'tree': case 'raw': el.append(tree(data)); return 'tree';
    default: break;
  }
  switch (kind(v)) {
    case 'text': if (text !== null) return declaresMarkdown(v) ? markdown(el, text) : plain(el, text); break;
    case 'file_content': if (data && typeof data.content === 'string') return fileContent(el, data, v); break;
    case 'diff': if (data && typeof data.modified === 'string') return diff(el, data); break;
    case 'file_list': if (data && Array.isArray(data.entries)) return fileList(el, data); break;
    case 'table': if (data && Array.isArray(data.columns) && Array.isArray(data.rows)) return table(el, data); break;
    case 'image': if (data && data.source) return image(el, data, v.mimeType, opts); break;
    case 'file': if (data && data.source) return file(el, data, v.mimeType, opts); break;
    case 'resource_link': if (data && typeof data.uri === 'string') return resourceLink(el, data, v.mimeType, opts); break;
    default: break;
  }
  if (declaresMarkdown(v) && text !== null) return markdown(el, text);
  if (typeof v.mimeType === 'string' && v.mimeType.startsWith('text/') && text !== null) return plain(el, text);
  // Like records are a table (a tree of 3,000 records is 9,000 px tall); asked for a tree
  // (`preferredView: tree`) they stayed one above.
  const drawn = records(el, data);
  if (drawn) return drawn;
  el.append(tree(data));
  return 'tree';
}

function kind(v) {
  return typeof v.kind === 'string' ? v.kind : '';
}

// ---- widgets --------------------------------------------------------------------------------

/** A widget: its registered renderer, else its fallback text. */
export function renderWidget(w, opts = {}) {
  const box = h('section', { class: 'tw-widget', 'data-widget': String((w && w.widget) || '') });
  const fn = w && widgets.get(String(w.widget));
  if (fn) {
    try {
      fn(box, w, opts);
      return box;
    } catch (err) {
      box.replaceChildren(h('p', { class: 'tw-note' }, `widget failed: ${err.message}`));
    }
  }
  box.append(h('p', { class: 'tw-fallback' }, String((w && w.fallback) || '')));
  return box;
}
