// toolwire-render, table: Tables (typed, sortable, filterable, virtually scrolled, copied as CSV), file lists,
// and arrays of like records drawn as tables.
// Part of web/toolwire-render.js (see its header); everything drawn is untrusted.

import { leaf } from './tree.js';
import { h } from './util.js';

const ROW_PX = 26;
const VISIBLE_ROWS = 20;

function cellText(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

export function table(el, data, columnsOverride) {
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

export function fileList(el, data) {
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

/** Rows scanned to find the columns of like records and judge the likeness. */
const RECORD_SCAN_ROWS = 1000;
/** More distinct keys than this is not a table a person can read: it stays a tree. */
const RECORD_MAX_COLUMNS = 40;

const isRecord = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isContainer = (v) => v !== null && typeof v === 'object' && Object.keys(v).length > 0;

/** The columns (keys in first-seen order) of `items` when they are like records, else null:
 * the terminal's rule (toolwire-term `kinds/records.rs`). At least two items, all objects,
 * each scanned one holding at least half of the keys seen, at least half of their values
 * scalars; keys null in every scanned row are left out. */
export function recordColumns(items) {
  if (!Array.isArray(items) || items.length < 2 || !items.every(isRecord)) return null;
  const scanned = items.slice(0, RECORD_SCAN_ROWS);
  const keys = [];
  const seen = new Set();
  for (const m of scanned) {
    for (const k of Object.keys(m)) {
      if (seen.has(k)) continue;
      seen.add(k);
      keys.push(k);
      if (keys.length > RECORD_MAX_COLUMNS) return null;
    }
  }
  if (!keys.length) return null;
  let values = 0;
  let scalars = 0;
  for (const m of scanned) {
    const own = Object.keys(m);
    if (own.length * 2 < keys.length) return null;
    values += own.length;
    scalars += own.filter((k) => !isContainer(m[k])).length;
  }
  if (scalars * 2 < values) return null;
  const filled = keys.filter((k) => scanned.some((m) => m[k] !== null && m[k] !== undefined));
  return filled.length ? filled : keys;
}

/** Draws `data` as a table when it is like records, or an object holding one such array
 * beside scalars (ruff's `{"issues": [..]}`): its scalars as trees before and after, the
 * array as a titled table where it stands. Returns 'table', or null when `data` is neither. */
export function records(el, data) {
  const asTable = (rows, keys) => table(el, { rows }, keys.map((key) => ({ key })));
  if (Array.isArray(data)) {
    const keys = recordColumns(data);
    return keys ? asTable(data, keys) : null;
  }
  if (!isRecord(data)) return null;
  let held = null;
  for (const [k, v] of Object.entries(data)) {
    const keys = !held && Array.isArray(v) ? recordColumns(v) : null;
    if (keys) held = { k, v, keys };
    else if (isContainer(v)) return null;
  }
  if (!held) return null;
  const entries = Object.entries(data);
  const at = entries.findIndex(([k]) => k === held.k);
  const before = entries.slice(0, at);
  const after = entries.slice(at + 1);
  if (before.length) el.append(fields(before));
  el.append(h('div', { class: 'tw-records-title' }, h('code', {}, held.k), h('span', { class: 'tw-muted' }, ` ${held.v.length} rows`)));
  asTable(held.v, held.keys);
  if (after.length) el.append(fields(after));
  return 'table';
}

/** Scalars as `key: value` lines, coloured as the tree colours them (its own `leaf`). */
function fields(entries) {
  return h('div', { class: 'tw-records-fields' }, ...entries.map(([k, v]) =>
    h('div', { class: 'tw-leaf', 'data-key': k }, h('span', { class: 'tw-key' }, `${k}: `), leaf(v))));
}
