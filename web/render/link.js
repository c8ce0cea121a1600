// toolwire-render, link: Resource links: chips with Copy URI and Read (an MCP `resources/read` answer drawn below).
// Part of web/toolwire-render.js (see its header); everything drawn is untrusted.

import { renderValue } from '../toolwire-render.js';
import { bytes, cleanBase64, essence, h, safeHref } from './util.js';

export function resourceLink(el, data, mime, opts) {
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
