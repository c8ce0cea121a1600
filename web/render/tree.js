// toolwire-render, tree: The JSON tree: expand and collapse all, find, copy JSON and copy a path.
// Part of web/toolwire-render.js (see its header); everything drawn is untrusted.

import { h } from './util.js';

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

/** A value drawn as one coloured span: scalars, and (for a records table's holder) the
 * empty `{}` or `[]` written as JSON, as strings are. */
export function leaf(v) {
  if (typeof v === 'string' || (v !== null && typeof v === 'object')) return h('span', { class: 'tw-str' }, JSON.stringify(v));
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
