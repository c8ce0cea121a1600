// toolwire-render, diff: Diffs, unified or side by side.
// Part of web/toolwire-render.js (see its header); everything drawn is untrusted.

import { h } from './util.js';

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

export function diff(el, data) {
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
