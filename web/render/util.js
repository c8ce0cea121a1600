// toolwire-render, util: Shared by the kinds: elements made without markup, sizes, safe URLs and media sources.
// Part of web/toolwire-render.js (see its header); everything drawn is untrusted.

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
export function safeHref(url) {
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
export const PASSIVE_MEDIA = /^(image\/(png|jpeg|gif|webp|avif|bmp)|audio\/[a-z0-9.-]+|video\/[a-z0-9.-]+)$/;

/** A MIME type's essence (`image/png` of `Image/PNG; x=y`), or ''. */
export function essence(mime) {
  return typeof mime === 'string' ? mime.split(';')[0].trim().toLowerCase() : '';
}

/** Inline base64 without whitespace, or null when it is not base64 at all. */
export function cleanBase64(text) {
  if (typeof text !== 'string') return null;
  const clean = text.replace(/[\t\n\f\r ]+/g, '');
  return /^[A-Za-z0-9+/]*={0,2}$/.test(clean) ? clean : null;
}

/** A URL the page may load a value's bytes from as media: the caller's URL for a stored
 * blob, an http(s) URL as given, or an object URL for inline base64 of a passive type
 * (typed with that type, so the browser never sniffs it). Inline bytes of any other type
 * get none (see PASSIVE_MEDIA): they are drawn elsewhere or offered as a download. */
export function sourceUrl(source, mime, opts) {
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
export function downloadUrl(source) {
  const b64 = source && cleanBase64(source.base64);
  return b64 === null ? null : `data:application/octet-stream;base64,${b64}`;
}


/** A media length as m:ss (or h:mm:ss). */
export function clockOf(seconds) {
  const s = Math.round(seconds);
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return hh ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

/** The size of a source: its base64's bytes, or the size stored beside its blob key. */
export function inlineOrStoredSize(source) {
  if (!source) return null;
  if (typeof source.base64 === 'string') return base64Bytes(source.base64);
  return typeof source.size === 'number' ? source.size : null;
}

export function base64Bytes(b64) {
  const clean = String(b64).replace(/[^A-Za-z0-9+/]/g, '');
  return Math.floor((clean.length * 3) / 4);
}
