// "What the model saw": the block of a provider's request that carries one call's result,
// after toolwire's budgets and media routing, taken from the server's export of the
// session for that provider (`GET /api/sessions/{id}/export?provider=`), exactly as it
// would be sent, with the encoder's diagnostics for the call: whether and how its result
// was cut (which budget, how much was left out, the read_result call that reads the rest).

import { api } from './api.js';
import { h, pretty, showError } from './util.js';

export const PROVIDERS = [
  ['anthropic', 'Anthropic Messages'],
  ['openai-chat', 'OpenAI Chat Completions'],
  ['openai-responses', 'OpenAI Responses'],
  ['gemini', 'Gemini'],
];
const ID_KEYS = ['tool_use_id', 'tool_call_id', 'call_id', 'id'];
// The call itself carries the id too; only the answer to it is wanted.
const CALL_TYPES = new Set(['tool_use', 'function_call']);

/** The exports fetched for this page, per provider, until the session changes. */
const cache = new Map();

function exportOf(view, provider) {
  const key = `${view.id} ${provider} ${view.after}`;
  if (!cache.has(key)) {
    const p = api(`/api/sessions/${view.id}/export?provider=${encodeURIComponent(provider)}&diagnostics=true`);
    p.catch(() => cache.delete(key));
    cache.set(key, p);
  }
  return cache.get(key);
}

/** Every object in `body` that answers call `callId` (not the call itself). */
export function blocksFor(body, callId) {
  const out = [];
  const walk = (v, depth) => {
    if (!v || typeof v !== 'object' || depth > 40) return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
      return;
    }
    // Gemini's call is a part { functionCall: { id, name, args } }: the call, not looked
    // into (its inner object names the id too, and was shown unwrapped, as never sent).
    if (v.functionCall) return;
    const named = ID_KEYS.some((k) => v[k] === callId);
    const isCall = CALL_TYPES.has(v.type) || 'arguments' in v || 'input' in v || 'args' in v || 'function' in v;
    if (named && !isCall) {
      out.push(v);
      return;
    }
    // Gemini wraps the answer: { functionResponse: { id, name, response } }.
    if (v.functionResponse && v.functionResponse.id === callId) {
      out.push(v);
      return;
    }
    for (const x of Object.values(v)) walk(x, depth + 1);
  };
  walk(body, 0);
  return out;
}

/** The cut markers in the strings of `value`: what was left out and the `read_result`
 * call that reads it (truncate/*.rs writes them: `[… 1,234 chars (56 lines) omitted by
 * toolwire; read them with read_result {…} …]`, `[… JSON shortened by toolwire: … omitted;
 * read the full value with read_result {…} …]`). */
function cutsIn(value) {
  const out = [];
  const re = /\[… (?:JSON shortened(?: by toolwire)?: )?([^[\]]*?) omitted(?: by toolwire)?(?: \([^)]*\))?; read (?:them|the full value) with (read_result \{[^{}]*\}) …\]/g;
  const walk = (v, depth) => {
    if (depth > 40 || out.length >= 20) return;
    if (typeof v === 'string') {
      for (const m of v.matchAll(re)) out.push({ what: m[1], read: m[2] });
    } else if (v && typeof v === 'object') {
      for (const x of Object.values(v)) walk(x, depth + 1);
    }
  };
  walk(value, 0);
  return out;
}

/** Whether and how the call's result was cut for this provider: the encoder's
 * diagnostics for the call (which budget, how much) and each marker in its block. */
function cutReport(diagnostics, callId, blocks) {
  const mine = (Array.isArray(diagnostics) ? diagnostics : []).filter((d) => d && d.callId === callId && typeof d.message === 'string');
  const cuts = cutsIn(blocks);
  const box = h('div', { class: 'model-cut', 'data-cut': mine.some((d) => d.code === 'truncated') || cuts.length ? 'true' : 'false' });
  if (!mine.length && !cuts.length) {
    box.append('Not cut: the whole result fits this provider\'s budget.');
    return box;
  }
  const list = h('ul', {});
  for (const d of mine) list.append(h('li', {}, d.code === 'truncated' ? `Cut: ${d.message}.` : d.message));
  for (const c of cuts) list.append(h('li', {}, `Left out: ${c.what}; the model can read it with `, h('code', {}, c.read)));
  box.append(list);
  return box;
}

/** The panel of a card: a provider picker and the block(s) sent for this call. */
export function modelView(view, card) {
  const select = h('select', { 'aria-label': 'Provider' },
    PROVIDERS.map(([v, label]) => h('option', { value: v }, label)));
  if (view.info && PROVIDERS.some(([v]) => v === view.info.provider)) select.value = view.info.provider;
  const out = h('pre', { class: 'model-block', tabindex: 0 });
  const note = h('p', { class: 'muted model-note' });
  const cut = h('div', { class: 'model-cut-slot' });
  const box = h('div', { class: 'model-view' },
    h('div', { class: 'model-head' }, h('strong', {}, 'What the model saw'), select, note), cut, out);
  let shown = 0;
  const show = async () => {
    // The latest pick wins: an earlier provider's export that answers later is dropped
    // (it overwrote the block of the provider picked after it).
    const mine = (shown += 1);
    out.textContent = 'Loading…';
    note.textContent = '';
    cut.replaceChildren();
    try {
      const { request: body, diagnostics } = await exportOf(view, select.value);
      if (mine !== shown) return;
      const blocks = blocksFor(body, card.callId);
      cut.replaceChildren(cutReport(diagnostics, card.callId, blocks));
      if (blocks.length) {
        out.textContent = pretty(blocks.length === 1 ? blocks[0] : blocks);
        note.textContent = 'after budgets and media routing, for this provider\'s default model';
      } else {
        out.textContent = pretty(body);
        note.textContent = 'no block names this call: the whole request';
      }
    } catch (err) {
      if (mine !== shown) return;
      out.textContent = '';
      showError(out, err);
    }
  };
  select.addEventListener('change', show);
  show();
  return box;
}
