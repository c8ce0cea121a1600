// toolwire-render, image: Images: small ones enlarged with hard pixel edges, captions, a lightbox; SVG on the sandbox origin.
// Part of web/toolwire-render.js (see its header); everything drawn is untrusted.

import { file } from './file.js';
import { PASSIVE_MEDIA, base64Bytes, bytes, cleanBase64, essence, h, sourceUrl } from './util.js';

export function image(el, data, mime, opts) {
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
