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

import { marked } from './vendor/marked.esm.js';
import DOMPurify from './vendor/purify.es.mjs';
import hljs from './vendor/highlight.min.js';

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

/** An element with attributes and children; strings become text nodes, never markup. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** A size in bytes for people: 812 B, 4.2 kB, 1.3 MB (also used by the app's cards). */
export function bytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '';
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i += 1;
  }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

/** Only http(s) and same-origin relative URLs may become links. */
function safeHref(url) {
  if (typeof url !== 'string') return null;
  try {
    const u = new URL(url, location.href);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

// The types the browser only ever decodes as media and never runs: only these become
// `blob:` URLs. A blob: URL belongs to the origin that made it and can be opened as a page
// of its own (a new tab, a dragged link), outside this page's policy: an SVG, HTML or XML
// there runs its script with this origin's rights (it could approve a pending call). So
// SVG is not here, nor any `+xml` subtype (which Chromium renders as an XML document).
const PASSIVE_MEDIA = /^(image\/(png|jpeg|gif|webp|avif|bmp)|audio\/[a-z0-9.-]+|video\/[a-z0-9.-]+)$/;

/** A MIME type's essence (`image/png` of `Image/PNG; x=y`), or ''. */
function essence(mime) {
  return typeof mime === 'string' ? mime.split(';')[0].trim().toLowerCase() : '';
}

/** Inline base64 without whitespace, or null when it is not base64 at all. */
function cleanBase64(text) {
  if (typeof text !== 'string') return null;
  const clean = text.replace(/[\t\n\f\r ]+/g, '');
  return /^[A-Za-z0-9+/]*={0,2}$/.test(clean) ? clean : null;
}

/** A URL the page may load a value's bytes from as media: the caller's URL for a stored
 * blob, an http(s) URL as given, or an object URL for inline base64 of a passive type
 * (typed with that type, so the browser never sniffs it). Inline bytes of any other type
 * get none (see PASSIVE_MEDIA): they are drawn elsewhere or offered as a download. */
function sourceUrl(source, mime, opts) {
  if (!source || typeof source !== 'object') return null;
  if (typeof source.blob === 'string') return opts.resourceUrl ? opts.resourceUrl(source.blob) : null;
  if (typeof source.base64 === 'string') {
    const type = essence(mime);
    if (!PASSIVE_MEDIA.test(type)) return null;
    try {
      const bin = atob(source.base64);
      const buf = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i += 1) buf[i] = bin.charCodeAt(i);
      return URL.createObjectURL(new Blob([buf], { type }));
    } catch {
      return null;
    }
  }
  if (typeof source.url === 'string') return safeHref(source.url);
  return null;
}

/** A download URL for inline base64 of a type that may not become a blob: URL: a data: URL
 * typed `application/octet-stream`. Its bytes are only ever saved, and a data: URL opened
 * as a page has an opaque origin of its own, never this one. */
function downloadUrl(source) {
  const b64 = source && cleanBase64(source.base64);
  return b64 === null ? null : `data:application/octet-stream;base64,${b64}`;
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
  if (result.error) {
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
  el.append(tree(data));
  return 'tree';
}

function kind(v) {
  return typeof v.kind === 'string' ? v.kind : '';
}

/** Texts of at least this many lines get line numbers, find and a wrap toggle. */
const LONG_TEXT_LINES = 20;
/** Matches find marks at most. */
const FIND_MAX = 500;

function plain(el, text) {
  const pre = h('pre', { class: 'tw-text' }, text);
  const lines = text.split('\n').length;
  if (lines < LONG_TEXT_LINES) {
    el.append(pre);
    return 'text';
  }
  // Long text: numbered lines, find (marks each match, scrolls to the first) and wrap.
  const gutter = h('pre', { class: 'tw-gutter', 'aria-hidden': 'true' }, Array.from({ length: lines }, (_, i) => i + 1).join('\n'));
  // Unwrapped by default, so the numbers stay beside their lines; wrapped, they go.
  const body = h('div', { class: 'tw-long-text', 'data-wrap': 'false', tabindex: 0, 'aria-label': `text, ${lines} lines` }, gutter, pre);
  const wrap = h('button', { type: 'button', 'data-role': 'wrap', 'aria-pressed': 'false' }, 'wrap lines');
  wrap.addEventListener('click', () => {
    const on = body.dataset.wrap !== 'true';
    body.dataset.wrap = String(on);
    wrap.setAttribute('aria-pressed', String(on));
  });
  const find = h('input', { type: 'search', placeholder: 'find', 'aria-label': 'find in text', 'data-role': 'find' });
  const found = h('span', { class: 'tw-muted', role: 'status' });
  let timer = 0;
  find.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      const q = find.value;
      if (!q) {
        pre.replaceChildren(text);
        found.textContent = '';
        return;
      }
      const lower = text.toLowerCase();
      const needle = q.toLowerCase();
      const parts = [];
      let at = 0;
      let n = 0;
      for (let i = lower.indexOf(needle); i >= 0 && n < FIND_MAX; i = lower.indexOf(needle, i + needle.length)) {
        parts.push(text.slice(at, i), h('mark', { class: 'tw-mark' }, text.slice(i, i + needle.length)));
        at = i + needle.length;
        n += 1;
      }
      parts.push(text.slice(at));
      pre.replaceChildren(...parts);
      found.textContent = `${n}${n >= FIND_MAX ? '+' : ''} found`;
      const first = pre.querySelector('mark');
      if (first) first.scrollIntoView({ block: 'nearest' });
    }, 150);
  });
  el.append(h('div', { class: 'tw-text-tools' }, find, found, wrap), body);
  return 'text';
}

// ---- markdown: rendered, then sanitized ----------------------------------------------------

const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'svg', 'math'],
  FORBID_ATTR: ['style'],
  ALLOW_DATA_ATTR: false,
};

/** The attributes by which markup fetches on its own (links only fetch when followed). */
const FETCHING = ['src', 'srcset', 'poster', 'background'];

/** `url` resolved, when it is this origin's (and not empty); else null. */
function sameOrigin(url) {
  if (typeof url !== 'string' || !url.trim()) return null;
  const href = safeHref(url);
  return href && new URL(href).origin === location.origin ? href : null;
}

/** The candidates of a srcset that are this origin's, or null when none is. The kept ones
 * are written out afresh (absolute URL, checked descriptor), so what the browser parses is
 * exactly what was checked, however oddly the original was written. */
function sameOriginSrcset(value) {
  const s = String(value);
  const space = (c) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f';
  const kept = [];
  let i = 0;
  // As the HTML parser reads it: a URL (no whitespace; commas that end it end the
  // candidate), then descriptors up to the next comma.
  while (i < s.length) {
    while (i < s.length && (space(s[i]) || s[i] === ',')) i += 1;
    if (i >= s.length) break;
    let j = i;
    while (j < s.length && !space(s[j])) j += 1;
    let url = s.slice(i, j);
    let descriptor = '';
    if (url.endsWith(',')) {
      url = url.replace(/,+$/, '');
      i = j;
    } else {
      const comma = s.indexOf(',', j);
      const end = comma < 0 ? s.length : comma;
      descriptor = s.slice(j, end).trim();
      i = end + 1;
    }
    const href = sameOrigin(url);
    if (href && /^(\d+w|\d+(\.\d+)?x)?$/.test(descriptor)) kept.push(descriptor ? `${href} ${descriptor}` : href);
  }
  return kept.length ? kept.join(', ') : null;
}

function markdown(el, text) {
  const html = marked.parse(text, { async: false, gfm: true });
  const clean = DOMPurify.sanitize(html, { ...PURIFY, RETURN_DOM_FRAGMENT: true });
  for (const a of clean.querySelectorAll('a')) {
    const href = safeHref(a.getAttribute('href'));
    if (href) {
      a.setAttribute('href', href);
      a.setAttribute('rel', 'noopener noreferrer nofollow');
      a.setAttribute('target', '_blank');
    } else {
      a.removeAttribute('href');
    }
  }
  // Whatever model or tool markdown makes the browser fetch by itself (an image, each
  // srcset candidate, a poster, a legacy background) must be this origin's: a remote one
  // would tell a third party who reads what, and when.
  for (const node of clean.querySelectorAll(FETCHING.map((a) => `[${a}]`).join(', '))) {
    for (const attr of FETCHING) {
      if (!node.hasAttribute(attr)) continue;
      const kept = attr === 'srcset' ? sameOriginSrcset(node.getAttribute(attr)) : sameOrigin(node.getAttribute(attr));
      if (kept) node.setAttribute(attr, kept);
      else node.removeAttribute(attr);
    }
  }
  // An image with nothing of this origin left to show is its alt text.
  for (const img of clean.querySelectorAll('img')) {
    if (!img.hasAttribute('src') && !img.hasAttribute('srcset')) img.replaceWith(document.createTextNode(img.getAttribute('alt') || ''));
  }
  for (const c of clean.querySelectorAll('pre code')) highlightInPlace(c, (c.className.match(/language-([\w+-]+)/) || [])[1]);
  el.append(h('div', { class: 'tw-markdown' }, clean));
  return 'markdown';
}

// ---- code and files ------------------------------------------------------------------------

const EXT_LANG = { rs: 'rust', js: 'javascript', mjs: 'javascript', ts: 'typescript', py: 'python', rb: 'ruby', go: 'go',
  java: 'java', c: 'c', h: 'c', cpp: 'cpp', cs: 'csharp', sh: 'bash', json: 'json', toml: 'ini', yml: 'yaml', yaml: 'yaml',
  md: 'markdown', html: 'xml', xml: 'xml', css: 'css', sql: 'sql', kt: 'kotlin', swift: 'swift', php: 'php' };

function languageOf(path, hint) {
  if (hint && hljs.getLanguage(hint)) return hint;
  const ext = typeof path === 'string' ? (path.split('.').pop() || '').toLowerCase() : '';
  return EXT_LANG[ext] && hljs.getLanguage(EXT_LANG[ext]) ? EXT_LANG[ext] : null;
}

/** Highlights `codeEl`'s own text; highlight.js escapes what it emits. */
function highlightInPlace(codeEl, lang) {
  if (!lang || !hljs.getLanguage(lang) || codeEl.textContent.length > 200000) return;
  const out = hljs.highlight(codeEl.textContent, { language: lang, ignoreIllegals: true });
  codeEl.innerHTML = DOMPurify.sanitize(out.value, { ALLOWED_TAGS: ['span'], ALLOWED_ATTR: ['class'] });
  codeEl.classList.add('hljs');
}

function numbered(text, lang) {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const gutter = h('pre', { class: 'tw-gutter', 'aria-hidden': 'true' }, lines.map((_, i) => `${i + 1}`).join('\n'));
  const codeEl = h('code', {}, lines.join('\n'));
  highlightInPlace(codeEl, lang);
  return h('div', { class: 'tw-code' }, gutter, h('pre', { class: 'tw-source' }, codeEl));
}

function code(el, text, lang) {
  el.append(numbered(text, languageOf('', lang)));
  return 'code';
}

function fileContent(el, data, v) {
  const head = h('div', { class: 'tw-file-head' }, h('code', {}, String(data.path || '')),
    typeof data.size === 'number' ? h('span', { class: 'tw-muted' }, ` ${bytes(data.size)}`) : null);
  el.append(head);
  // A declared text/plain wins over a guess from the path (`.../resource/1` is not troff).
  const plain = typeof v.mimeType === 'string' && v.mimeType.split(';')[0].trim().toLowerCase() === 'text/plain';
  const hint = (v.display || {}).language;
  const language = plain && !hint ? null : languageOf(data.path, hint);
  const source = numbered(data.content, language);
  el.append(source);
  if (language === 'markdown') {
    // A markdown file (README.md) is read as source, what a tool edits; a person may want
    // it drawn: a toggle, drawn on first use.
    let drawn = null;
    const toggle = h('button', { type: 'button', class: 'tw-copy', 'data-role': 'render-markdown', 'aria-pressed': 'false' }, 'rendered');
    toggle.addEventListener('click', () => {
      const on = toggle.getAttribute('aria-pressed') !== 'true';
      if (on && !drawn) {
        drawn = h('div', {});
        markdown(drawn, data.content);
        source.after(drawn);
      }
      toggle.setAttribute('aria-pressed', String(on));
      source.hidden = on;
      if (drawn) drawn.hidden = !on;
    });
    head.append(toggle);
  }
  return 'file_content';
}

// ---- diffs: unified and side by side --------------------------------------------------------

/** Unified-diff lines of `data`: its hunks, else a whole-file diff of original/modified. */
function diffLines(data) {
  if (Array.isArray(data.hunks) && data.hunks.length) {
    const out = [];
    for (const hk of data.hunks) {
      out.push(`@@ -${hk.oldStart},${hk.oldLines} +${hk.newStart},${hk.newLines} @@`);
      for (const l of Array.isArray(hk.lines) ? hk.lines : []) out.push(String(l));
    }
    return out;
  }
  const a = typeof data.original === 'string' ? data.original.split('\n') : [];
  const b = data.modified.split('\n');
  return lcsDiff(a, b);
}

/** A small LCS line diff, for results that carry both texts but no hunks. */
function lcsDiff(a, b) {
  if (a.length * b.length > 4e6) return [...a.map((l) => `-${l}`), ...b.map((l) => `+${l}`)];
  const n = a.length;
  const m = b.length;
  const dp = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) for (let j = m - 1; j >= 0; j -= 1) {
    dp[i][j] = a[i] === b[j] ? dp[i + 1][j + 1] + 1 : Math.max(dp[i + 1][j], dp[i][j + 1]);
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { out.push(` ${a[i]}`); i += 1; j += 1; }
    else if (j < m && (i === n || dp[i][j + 1] >= dp[i + 1][j])) { out.push(`+${b[j]}`); j += 1; }
    else { out.push(`-${a[i]}`); i += 1; }
  }
  return out;
}

function lineClass(l) {
  if (l.startsWith('@@')) return 'tw-hunk';
  if (l.startsWith('+')) return 'tw-add';
  if (l.startsWith('-')) return 'tw-del';
  return 'tw-ctx';
}

function diff(el, data) {
  const lines = diffLines(data);
  const unified = h('pre', { class: 'tw-diff-unified' }, lines.map((l) => h('div', { class: lineClass(l) }, l)));
  const left = h('pre', { class: 'tw-diff-old' });
  const right = h('pre', { class: 'tw-diff-new' });
  let pendingDel = [];
  const flush = () => {
    for (const l of pendingDel) { left.append(h('div', { class: 'tw-del' }, l.slice(1))); right.append(h('div', { class: 'tw-pad' }, '')); }
    pendingDel = [];
  };
  for (const l of lines) {
    const c = lineClass(l);
    if (c === 'tw-del') { pendingDel.push(l); continue; }
    if (c === 'tw-add' && pendingDel.length) {
      const d = pendingDel.shift();
      left.append(h('div', { class: 'tw-del' }, d.slice(1)));
      right.append(h('div', { class: 'tw-add' }, l.slice(1)));
      continue;
    }
    flush();
    if (c === 'tw-add') { left.append(h('div', { class: 'tw-pad' }, '')); right.append(h('div', { class: 'tw-add' }, l.slice(1))); }
    else { left.append(h('div', { class: c }, c === 'tw-hunk' ? l : l.slice(1))); right.append(h('div', { class: c }, c === 'tw-hunk' ? l : l.slice(1))); }
  }
  flush();
  const split = h('div', { class: 'tw-diff-split', hidden: true }, left, right);
  const box = h('div', { class: 'tw-diff', 'data-mode': 'unified' });
  const toggle = h('button', { type: 'button', 'data-role': 'diff-toggle' }, 'side by side');
  toggle.addEventListener('click', () => {
    const side = box.dataset.mode === 'unified';
    box.dataset.mode = side ? 'split' : 'unified';
    unified.hidden = side;
    split.hidden = !side;
    toggle.textContent = side ? 'unified' : 'side by side';
  });
  box.append(h('div', { class: 'tw-file-head' }, h('code', {}, String(data.path || '')), data.isNew ? ' (new file) ' : ' ', toggle), unified, split);
  el.append(box);
  return 'diff';
}

// ---- tables: typed, sortable, filterable, virtually scrolled ---------------------------------

const ROW_PX = 26;
const VISIBLE_ROWS = 20;

function cellText(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

function table(el, data, columnsOverride) {
  const rows = data.rows;
  let columns = columnsOverride || (Array.isArray(data.columns) ? data.columns : []);
  if (!columns.length && rows.length && rows[0] && typeof rows[0] === 'object' && !Array.isArray(rows[0])) {
    columns = Object.keys(rows[0]).map((key) => ({ key }));
  }
  columns = columns.filter((c) => c && typeof c.key === 'string');
  const get = (row, c, i) => (Array.isArray(row) ? row[i] : row && typeof row === 'object' ? row[c.key] : undefined);
  const numeric = columns.map((c, i) => c.type === 'number' || (!c.type && rows.length > 0
    && rows.slice(0, 50).every((r) => { const v = get(r, c, i); return v === null || v === undefined || typeof v === 'number'; })
    && rows.slice(0, 50).some((r) => typeof get(r, c, i) === 'number')));
  let order = rows.map((_, i) => i);
  let shown = order;
  let sortBy = -1;
  let desc = false;
  const filter = h('input', { type: 'search', placeholder: 'filter rows', 'data-role': 'filter', 'aria-label': 'filter rows' });
  const count = h('span', { class: 'tw-muted tw-count' });
  const head = h('div', { class: 'tw-tr tw-th-row', role: 'row' });
  const widths = columns.map((c) => Math.min(24, Math.max(6, (c.label || c.key).length + 2)));
  const template = widths.map((w) => `minmax(${w}ch, 1fr)`).join(' ');
  head.style.gridTemplateColumns = template;
  columns.forEach((c, i) => {
    const th = h('div', { class: `tw-th${numeric[i] ? ' tw-num' : ''}`, role: 'columnheader', 'data-role': 'sort', 'data-key': c.key, tabindex: 0, title: c.type || (numeric[i] ? 'number' : 'string') }, c.label || c.key);
    const sort = () => {
      desc = sortBy === i ? !desc : false;
      sortBy = i;
      for (const o of head.children) o.removeAttribute('aria-sort');
      th.setAttribute('aria-sort', desc ? 'descending' : 'ascending');
      const cmp = numeric[i]
        ? (x, y) => (Number(get(rows[x], c, i)) || 0) - (Number(get(rows[y], c, i)) || 0)
        : (x, y) => cellText(get(rows[x], c, i)).localeCompare(cellText(get(rows[y], c, i)));
      order = rows.map((_, k) => k).sort((x, y) => (desc ? -cmp(x, y) : cmp(x, y)) || x - y);
      apply();
    };
    th.addEventListener('click', sort);
    th.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sort(); } });
    head.append(th);
  });
  // Focusable, so a keyboard can scroll the rows.
  const viewport = h('div', { class: 'tw-viewport', role: 'rowgroup', tabindex: 0 });
  const spacer = h('div', { class: 'tw-spacer' });
  const windowEl = h('div', { class: 'tw-window' });
  viewport.append(spacer, windowEl);
  viewport.style.maxHeight = `${VISIBLE_ROWS * ROW_PX}px`;
  const paint = () => {
    const first = Math.max(0, Math.floor(viewport.scrollTop / ROW_PX) - 5);
    const last = Math.min(shown.length, first + VISIBLE_ROWS + 10);
    const frag = document.createDocumentFragment();
    for (let k = first; k < last; k += 1) {
      const row = rows[shown[k]];
      const tr = h('div', { class: 'tw-tr', role: 'row', 'data-row': shown[k] });
      tr.style.gridTemplateColumns = template;
      columns.forEach((c, i) => tr.append(h('div', { class: `tw-td${numeric[i] || c.align === 'right' ? ' tw-num' : ''}`, role: 'cell' }, cellText(get(row, c, i)))));
      frag.append(tr);
    }
    windowEl.style.transform = `translateY(${first * ROW_PX}px)`;
    windowEl.replaceChildren(frag);
  };
  const apply = () => {
    const q = filter.value.trim().toLowerCase();
    shown = q ? order.filter((k) => columns.some((c, i) => cellText(get(rows[k], c, i)).toLowerCase().includes(q))) : order;
    spacer.style.height = `${shown.length * ROW_PX}px`;
    count.textContent = `${shown.length} of ${rows.length} rows`;
    paint();
  };
  let frame = 0;
  viewport.addEventListener('scroll', () => {
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; paint(); });
  });
  filter.addEventListener('input', apply);
  // The rows shown (filtered, in their order) as CSV, quoted where a cell needs it.
  const csv = h('button', { type: 'button', 'data-role': 'copy-csv' }, 'copy CSV');
  csv.addEventListener('click', () => {
    const cell = (x) => (/[",\n\r]/.test(x) ? `"${x.replace(/"/g, '""')}"` : x);
    const lines = [columns.map((c) => cell(String(c.label || c.key))).join(',')];
    for (const k of shown) lines.push(columns.map((c, i) => cell(cellText(get(rows[k], c, i)))).join(','));
    if (navigator.clipboard) navigator.clipboard.writeText(`${lines.join('\n')}\n`).then(() => { csv.textContent = 'copied'; }, () => {});
  });
  // The filter sits beside the table, not in it: a table holds rows only.
  el.append(h('div', { class: 'tw-table' }, h('div', { class: 'tw-table-tools' }, filter, count, csv),
    h('div', { class: 'tw-scroll-x', role: 'table', 'aria-rowcount': rows.length + 1, 'aria-label': 'table' }, head, viewport)));
  apply();
  return 'table';
}

function fileList(el, data) {
  const rows = data.entries.filter((e) => e && typeof e === 'object').map((e) => ({
    name: String(e.name ?? '') + (e.type === 'directory' ? '/' : ''),
    type: e.type ?? '',
    size: typeof e.size === 'number' ? e.size : null,
    modified: e.modified ?? '',
  }));
  el.append(h('div', { class: 'tw-file-head' }, h('code', {}, String(data.path || '')), data.truncated ? ' (truncated)' : ''));
  table(el, { rows }, [{ key: 'name', label: 'name' }, { key: 'type', label: 'type' }, { key: 'size', label: 'size', type: 'number' }, { key: 'modified', label: 'modified' }]);
  return 'file_list';
}

// ---- media, files, links ------------------------------------------------------------------

function image(el, data, mime, opts) {
  const type = essence(mime) || 'image/png';
  const inline = data.source && typeof data.source.base64 === 'string';
  if (inline && type === 'image/svg+xml') return svgImage(el, data, opts);
  if (inline && !PASSIVE_MEDIA.test(type)) return file(el, { source: data.source, filename: 'image' }, type, opts);
  const src = sourceUrl(data.source, type, opts);
  if (!src) {
    el.append(h('p', { class: 'tw-note' }, 'image not available'));
    return 'image';
  }
  // A result's image is content: it gets a text alternative even when the tool gave none.
  const alt = String(data.alt || data.filename || `image (${type})`);
  const img = h('img', { class: 'tw-image', src, alt, loading: 'lazy', decoding: 'async' });
  const size = inline ? base64Bytes(data.source.base64)
    : data.source && typeof data.source.size === 'number' ? data.source.size : null;
  const caption = h('figcaption', { class: 'tw-caption' }, [type, size === null ? '' : bytes(size)].filter(Boolean).join(' · '));
  img.addEventListener('load', () => {
    const w = img.naturalWidth;
    const ht = img.naturalHeight;
    // What loading tells (dimensions) goes in an attribute drawn by CSS: the caption's text
    // stays the same however far the image has loaded.
    caption.dataset.loaded = `${w}×${ht} px`;
    // A tiny image (an icon, a 20×20 test pattern) is drawn at least 96 px, in whole
    // multiples with hard pixel edges, so it can be seen at all.
    if (w > 0 && ht > 0 && Math.max(w, ht) < MIN_IMAGE_PX) {
      const k = Math.ceil(MIN_IMAGE_PX / Math.max(w, ht));
      img.width = w * k;
      img.height = ht * k;
      img.classList.add('tw-pixelated');
      caption.dataset.loaded += ` · shown ×${k}`;
    }
  });
  const open = h('button', { type: 'button', class: 'tw-image-open', 'aria-label': `Open ${alt} at full size` }, img);
  open.addEventListener('click', () => lightbox(src, alt, [caption.textContent, caption.dataset.loaded].filter(Boolean).join(' · ')));
  const save = h('a', { class: 'tw-save', href: src, download: String(data.filename || `image.${type.split('/')[1] || 'bin'}`).replace(/[^\w.-]+/g, '_') }, 'Download');
  el.append(h('figure', { class: 'tw-figure' }, open, h('div', { class: 'tw-figure-bar' }, caption, save)));
  return 'image';
}

/** Images smaller than this on both sides are enlarged. */
const MIN_IMAGE_PX = 96;

/** A media length as m:ss (or h:mm:ss). */
function clockOf(seconds) {
  const s = Math.round(seconds);
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return hh ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

/** The size of a source: its base64's bytes, or the size stored beside its blob key. */
function inlineOrStoredSize(source) {
  if (!source) return null;
  if (typeof source.base64 === 'string') return base64Bytes(source.base64);
  return typeof source.size === 'number' ? source.size : null;
}

function base64Bytes(b64) {
  const clean = String(b64).replace(/[^A-Za-z0-9+/]/g, '');
  return Math.floor((clean.length * 3) / 4);
}

/** An image at its full size in a modal dialog; Escape, a click or Close ends it. */
function lightbox(src, alt, caption) {
  const img = h('img', { class: 'tw-lightbox-image', src, alt });
  img.addEventListener('load', () => {
    if (Math.max(img.naturalWidth, img.naturalHeight) < MIN_IMAGE_PX * 4) {
      const k = Math.max(1, Math.floor((MIN_IMAGE_PX * 4) / Math.max(img.naturalWidth, img.naturalHeight)));
      img.width = img.naturalWidth * k;
      img.classList.add('tw-pixelated');
    }
  });
  const close = h('button', { type: 'button', class: 'tw-lightbox-close' }, 'Close');
  const dialog = h('dialog', { class: 'tw-lightbox', 'aria-label': alt }, h('div', { class: 'tw-lightbox-body' }, img),
    h('div', { class: 'tw-lightbox-bar' }, h('span', { class: 'tw-caption' }, caption), close));
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('click', (e) => { if (e.target === dialog) dialog.close(); });
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  close.focus();
}

// ---- SVG: drawn on the sandbox origin ------------------------------------------------------
//
// An SVG is a document that can hold script. As an <img> it runs none, but a URL of it made
// here (blob:) is this origin's and opens as a page of its own, where the script runs with
// this page's rights. So inline SVG never becomes a URL of this origin. With a sandbox
// origin (toolwire's MCP Apps proxy, another origin), it is an <img> of a data: URL in the
// proxy's inner frame, which runs under the proxy's policy (images from data: allowed) with
// an opaque origin of its own: the image shows, and even opened as a page it is nobody's.
// (An <img> of a data: URL in this page would do too, but toolwire's own page policy admits
// images from itself and blob: only, and a srcdoc frame inherits that policy.) Without a
// sandbox origin (the renderer in another page), it is that <img> of a data: URL here.

const SVG_MAX_PX = 4000;

function svgImage(el, data, opts) {
  const b64 = cleanBase64(data.source.base64);
  if (b64 === null) {
    el.append(h('p', { class: 'tw-note' }, 'image not available'));
    return 'image';
  }
  const url = `data:image/svg+xml;base64,${b64}`;
  const alt = String(data.alt || '');
  let origin = null;
  try {
    origin = opts.sandboxOrigin ? new URL(opts.sandboxOrigin).origin : null;
  } catch {
    origin = null;
  }
  if (!origin || origin === location.origin) {
    el.append(h('img', { class: 'tw-image', src: url, alt, decoding: 'async' }));
    return 'image';
  }
  const frame = h('iframe', { class: 'tw-svg-frame', title: alt || 'SVG image', 'data-sandbox': 'svg' });
  // The proxy page needs both (as for an MCP App); the image's own frame inside it is
  // sandboxed to scripts only, and the only script there is the one below.
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin');
  const src = new URL('/sandbox', origin);
  src.searchParams.set('host', location.origin);
  src.searchParams.set('csp', '{}');
  frame.src = src.href;
  // The inner page reports the image's size as it lays out; nothing from the result is in
  // it but the checked base64.
  const html = `<!doctype html><meta charset="utf-8"><style>html,body{margin:0;background:transparent}img{display:block;max-width:100%;height:auto}</style><img src="${url}"><script>
const img = document.images[0];
const report = () => parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/size-changed',
  params: { width: img.naturalWidth, height: img.getBoundingClientRect().height } }, '*');
new ResizeObserver(report).observe(img);
img.addEventListener('load', report);
</script>`;
  let seen = false;
  const onMessage = (event) => {
    if (event.source !== frame.contentWindow || event.origin !== origin) {
      // Once drawn and then taken out of the page, the frame says nothing more.
      if (seen && !frame.isConnected) window.removeEventListener('message', onMessage);
      return;
    }
    seen = true;
    const m = event.data;
    if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0') return;
    if (m.method === 'ui/notifications/sandbox-proxy-ready') {
      frame.contentWindow.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/sandbox-resource-ready', params: { html } }, origin);
    } else if (m.method === 'ui/notifications/size-changed' && m.params) {
      const w = Number(m.params.width);
      const ht = Number(m.params.height);
      if (Number.isFinite(w) && w > 0) frame.style.width = `${Math.min(Math.ceil(w), SVG_MAX_PX)}px`;
      if (Number.isFinite(ht) && ht > 0) frame.style.height = `${Math.min(Math.ceil(ht), SVG_MAX_PX)}px`;
    }
  };
  window.addEventListener('message', onMessage);
  el.append(frame);
  return 'image';
}

function file(el, data, mime, opts) {
  const type = essence(mime);
  const src = sourceUrl(data.source, type, opts);
  const name = String(data.filename || 'file');
  if (src && (data.mediaKind === 'audio' || data.mediaKind === 'video')) {
    const player = h(data.mediaKind, { class: `tw-${data.mediaKind}`, controls: true, preload: 'metadata', src });
    const size = inlineOrStoredSize(data.source);
    // Type, size and (once the metadata is in) duration and, for video, dimensions.
    const caption = h('figcaption', { class: 'tw-caption' }, [type, size === null ? '' : bytes(size)].filter(Boolean).join(' · '));
    player.addEventListener('loadedmetadata', () => {
      const parts = [];
      if (Number.isFinite(player.duration)) parts.push(clockOf(player.duration));
      if (player.videoWidth) parts.push(`${player.videoWidth}×${player.videoHeight} px`);
      caption.dataset.loaded = parts.join(' · ');
    });
    const save = h('a', { class: 'tw-save', href: src, download: name.replace(/[^\w.-]+/g, '_') }, 'Download');
    el.append(h('figure', { class: 'tw-figure tw-media' }, player, h('div', { class: 'tw-figure-bar' }, caption, save)));
    return data.mediaKind;
  }
  const href = src || downloadUrl(data.source);
  const size = data.source && typeof data.source.size === 'number' ? data.source.size : null;
  el.append(h('div', { class: 'tw-download' },
    h('span', { class: 'tw-file-name' }, name),
    h('span', { class: 'tw-muted' }, ` ${type || data.mediaKind || ''} ${size !== null ? bytes(size) : ''}`),
    href ? h('a', { href, download: name, rel: 'noopener' }, 'download') : h('span', { class: 'tw-muted' }, ' not stored')));
  return 'download';
}

function resourceLink(el, data, mime, opts) {
  const uri = data.uri;
  const href = /^blake3:[0-9a-f]{64}$/.test(uri) && opts.resourceUrl ? opts.resourceUrl(uri) : safeHref(uri);
  const type = essence(mime || data.mimeType || '');
  const name = String(data.title || data.name || uri);
  const meta = [type, typeof data.size === 'number' ? bytes(data.size) : ''].filter(Boolean).join(' · ');
  const copied = h('span', { class: 'tw-muted tw-copied', role: 'status' });
  const copy = h('button', { type: 'button', class: 'tw-chip-button', 'data-role': 'copy-uri' }, 'Copy URI');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(uri);
      copied.textContent = 'copied';
    } catch {
      copied.textContent = 'cannot copy here';
    }
  });
  const shown = h('div', { class: 'tw-link-contents' });
  // Read: the page lends a reader (toolwire's app reads through the tool's own MCP server,
  // `resources/read`); the contents are drawn below as values, like a result's.
  let read = null;
  if (typeof opts.readResource === 'function') {
    read = h('button', { type: 'button', class: 'tw-chip-button', 'data-role': 'read', 'aria-expanded': 'false' }, 'Read');
    read.addEventListener('click', async () => {
      if (read.getAttribute('aria-expanded') === 'true') {
        shown.replaceChildren();
        read.setAttribute('aria-expanded', 'false');
        read.textContent = 'Read';
        return;
      }
      read.disabled = true;
      try {
        showRead(await opts.readResource(uri));
      } catch (err) {
        shown.replaceChildren(h('p', { class: 'tw-error' }, `cannot read ${uri}: ${err && err.message ? err.message : err}`));
      } finally {
        read.disabled = false;
      }
    });
  }
  /** Draws a `resources/read` answer below the chip, as values like a result's. */
  function showRead(got) {
    const contents = got && Array.isArray(got.contents) ? got.contents : [];
    shown.replaceChildren(...contents.map((c) => renderValue(contentValue(c), opts)));
    if (!contents.length) shown.append(h('p', { class: 'tw-note' }, 'the server returned no contents'));
    if (read) {
      read.setAttribute('aria-expanded', 'true');
      read.textContent = 'Hide';
    }
  }
  const kept = typeof opts.wasRead === 'function' ? opts.wasRead(uri) : null;
  if (kept) showRead(kept);
  el.append(h('div', { class: 'tw-link' },
    h('div', { class: 'tw-link-head' },
      href ? h('a', { href, rel: 'noopener noreferrer', target: '_blank', class: 'tw-link-name' }, name) : h('span', { class: 'tw-link-name' }, name),
      meta ? h('span', { class: 'tw-muted' }, meta) : null,
      h('span', { class: 'tw-link-actions' }, copy, read, copied)),
    data.description ? h('div', { class: 'tw-muted' }, String(data.description)) : null,
    h('code', { class: 'tw-link-uri' }, String(uri)),
    shown));
  return 'resource_link';
}

/** An MCP resource's contents (`{uri, mimeType, text | blob}`) as a toolwire value. */
function contentValue(c) {
  const mimeType = c && typeof c.mimeType === 'string' ? c.mimeType : undefined;
  if (c && typeof c.text === 'string') return { kind: 'text', mimeType, data: { content: c.text } };
  if (c && typeof c.blob === 'string') {
    const type = essence(mimeType || '');
    // Text sent as base64 is read as UTF-8 text (and shown as text, never markup).
    if (/^text\//.test(type) || type === 'application/json') {
      const b64 = cleanBase64(c.blob);
      if (b64 !== null) {
        try {
          const raw = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
          return { kind: 'text', mimeType, data: { content: new TextDecoder().decode(raw) } };
        } catch { /* not base64 after all: offered as a file below */ }
      }
    }
    if (/^image\//.test(type)) return { kind: 'image', mimeType, data: { source: { base64: c.blob } } };
    const filename = String(c.uri || 'resource').split('/').pop() || 'resource';
    return { kind: 'file', mimeType, data: { source: { base64: c.blob }, filename, mediaKind: /^audio\//.test(type) ? 'audio' : /^video\//.test(type) ? 'video' : 'document' } };
  }
  return { kind: 'structured', data: c };
}

// ---- JSON tree ------------------------------------------------------------------------------

const TREE_CHILDREN = 500;

/** Nodes opened by one "expand all" at most: a huge value stays usable. */
const TREE_EXPAND_MAX = 2000;
/** Matches a search marks at most. */
const TREE_HITS_MAX = 200;

/** A collapsible tree of any JSON value, with expand all, collapse all, search (which opens
 * the path to each match and marks it) and a copy button at the root. */
export function tree(value) {
  const root = h('div', { class: 'tw-tree' });
  const copy = h('button', { type: 'button', class: 'tw-copy', 'data-role': 'copy' }, 'copy JSON');
  copy.addEventListener('click', () => {
    const text = JSON.stringify(value, null, 2);
    if (navigator.clipboard) navigator.clipboard.writeText(text).then(() => { copy.textContent = 'copied'; }, () => {});
  });
  const top = node(value, null, 0);
  const expand = h('button', { type: 'button', 'data-role': 'expand-all' }, 'expand all');
  const collapse = h('button', { type: 'button', 'data-role': 'collapse-all' }, 'collapse all');
  const find = h('input', { type: 'search', placeholder: 'find in JSON', 'aria-label': 'find in JSON', 'data-role': 'tree-find' });
  const found = h('span', { class: 'tw-muted', role: 'status' });
  // The path of the node or value last picked (clicked, focused or found), to copy.
  const pathEl = h('code', { class: 'tw-path', 'data-role': 'path' });
  const copyPath = h('button', { type: 'button', 'data-role': 'copy-path', disabled: true }, 'copy path');
  let picked = null;
  const pick = (el) => {
    if (picked) picked.classList.remove('tw-picked');
    picked = el;
    el.classList.add('tw-picked');
    pathEl.textContent = pathText(pathOf(el, root));
    copyPath.disabled = false;
  };
  const onPick = (e) => {
    const el = e.target.closest('.tw-node, .tw-leaf');
    if (el && root.contains(el)) pick(el);
  };
  root.addEventListener('click', onPick);
  root.addEventListener('focusin', onPick);
  copyPath.addEventListener('click', () => {
    if (navigator.clipboard) navigator.clipboard.writeText(pathEl.textContent).then(() => { copyPath.textContent = 'copied'; setTimeout(() => { copyPath.textContent = 'copy path'; }, 1500); }, () => {});
  });
  expand.addEventListener('click', () => {
    const budget = { left: TREE_EXPAND_MAX };
    if (top.twOpen) top.twOpen(budget, true);
  });
  collapse.addEventListener('click', () => {
    for (const d of root.querySelectorAll('details.tw-node')) d.open = false;
    if (top.tagName === 'DETAILS') top.open = true;
  });
  let timer = 0;
  find.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      for (const el of root.querySelectorAll('.tw-hit')) el.classList.remove('tw-hit');
      const q = find.value.trim().toLowerCase();
      if (!q) {
        found.textContent = '';
        return;
      }
      const paths = [];
      search(value, q, [], paths);
      for (const path of paths) {
        const el = reveal(top, path);
        if (el) el.classList.add('tw-hit');
      }
      found.textContent = `${paths.length}${paths.length >= TREE_HITS_MAX ? '+' : ''} found`;
      const first = root.querySelector('.tw-hit');
      if (first) {
        first.scrollIntoView({ block: 'nearest' });
        pick(first);
      }
    }, 150);
  });
  root.append(h('div', { class: 'tw-tree-tools' }, find, found, expand, collapse, copy, copyPath, pathEl), top);
  return root;
}

/** The keys from the tree's root down to `el` (numbers for array items). */
function pathOf(el, root) {
  const keys = [];
  for (let e = el; e && e !== root; e = e.parentElement) {
    if (e.twKey !== undefined && e.twKey !== null) keys.unshift(e.twKey);
  }
  return keys;
}

/** `$.a.b[2]["odd key"]`: the path as JavaScript and jq-like tools write it. */
export function pathText(keys) {
  return `$${keys.map((k) => (typeof k === 'number' ? `[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`)).join('')}`;
}

/** The paths (arrays of keys) whose key or scalar value contains `q`. */
function search(v, q, path, out, depth = 0) {
  if (out.length >= TREE_HITS_MAX || depth > 100) return;
  if (v === null || typeof v !== 'object') {
    if (String(v).toLowerCase().includes(q)) out.push(path);
    return;
  }
  const entries = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
  for (const [k, x] of entries.slice(0, TREE_CHILDREN)) {
    if (out.length >= TREE_HITS_MAX) return;
    if (!Array.isArray(v) && String(k).toLowerCase().includes(q)) out.push([...path, k]);
    else search(x, q, [...path, k], out, depth + 1);
  }
}

/** Opens the tree along `path` and returns the node or leaf at its end. */
function reveal(top, path) {
  let el = top;
  for (const k of path) {
    if (!el || el.tagName !== 'DETAILS') return null;
    if (el.twBuild) el.twBuild();
    el.open = true;
    el = [...el.children].find((c) => c.dataset && c.dataset.key === String(k)) || null;
  }
  return el;
}

function leaf(v) {
  if (typeof v === 'string') return h('span', { class: 'tw-str' }, JSON.stringify(v));
  return h('span', { class: `tw-${v === null ? 'null' : typeof v}` }, String(v));
}

function node(v, key, depth) {
  const label = key === null ? null : h('span', { class: 'tw-key' }, `${key}: `);
  const keyAttr = key === null ? undefined : String(key);
  if (v === null || typeof v !== 'object') {
    const el = h('div', { class: 'tw-leaf', 'data-key': keyAttr }, label, leaf(v));
    el.twKey = key;
    return el;
  }
  const entries = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
  const brief = Array.isArray(v) ? `[${entries.length}]` : `{${entries.length}}`;
  const details = h('details', { class: 'tw-node', 'data-key': keyAttr }, h('summary', {}, label, brief));
  details.twKey = key;
  if (depth < 2) details.open = true;
  // Children are built when first opened: a huge value costs nothing until looked at.
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    for (const [k, x] of entries.slice(0, TREE_CHILDREN)) details.append(node(x, k, depth + 1));
    if (entries.length > TREE_CHILDREN) details.append(h('div', { class: 'tw-muted' }, `… ${entries.length - TREE_CHILDREN} more`));
  };
  if (details.open) build();
  details.addEventListener('toggle', build);
  details.twBuild = build;
  // Expand all: this node and its children, depth first, within the budget.
  details.twOpen = (budget) => {
    if (budget.left <= 0) return;
    budget.left -= 1;
    build();
    details.open = true;
    for (const c of details.children) if (c.twOpen) c.twOpen(budget);
  };
  return details;
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
