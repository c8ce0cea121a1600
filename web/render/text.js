// toolwire-render, text: Plain text; long text (20 lines or more) with line numbers, find and a wrap toggle.
// Part of web/toolwire-render.js (see its header); everything drawn is untrusted.

import { h } from './util.js';

/** Texts of at least this many lines get line numbers, find and a wrap toggle. */
const LONG_TEXT_LINES = 20;
/** Matches find marks at most. */
const FIND_MAX = 500;

export function plain(el, text) {
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
