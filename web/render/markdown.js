// toolwire-render, markdown: Markdown: rendered by marked, then sanitized by DOMPurify; nothing fetches by itself.
// Part of web/toolwire-render.js (see its header); everything drawn is untrusted.

import { marked } from '../vendor/marked.esm.js';
import DOMPurify from '../vendor/purify.es.mjs';
import { highlightInPlace } from './code.js';
import { h, safeHref } from './util.js';

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

export function markdown(el, text) {
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
