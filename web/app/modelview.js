// "What the model saw": the block of a provider's request that carries one call's result,
// after toolwire's budgets and media routing, taken from the server's export of the
// session for that provider (`GET /api/sessions/{id}/export?provider=`), exactly as it
// would be sent.

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
    const p = api(`/api/sessions/${view.id}/export?provider=${encodeURIComponent(provider)}`);
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
    const named = ID_KEYS.some((k) => v[k] === callId);
    const isCall = CALL_TYPES.has(v.type) || 'arguments' in v || 'input' in v || 'function' in v || 'functionCall' in v;
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

/** The panel of a card: a provider picker and the block(s) sent for this call. */
export function modelView(view, card) {
  const select = h('select', { 'aria-label': 'Provider' },
    PROVIDERS.map(([v, label]) => h('option', { value: v }, label)));
  if (view.info && PROVIDERS.some(([v]) => v === view.info.provider)) select.value = view.info.provider;
  const out = h('pre', { class: 'model-block', tabindex: 0 });
  const note = h('p', { class: 'muted model-note' });
  const box = h('div', { class: 'model-view' },
    h('div', { class: 'model-head' }, h('strong', {}, 'What the model saw'), select, note), out);
  const show = async () => {
    out.textContent = 'Loading…';
    note.textContent = '';
    try {
      const body = await exportOf(view, select.value);
      const blocks = blocksFor(body, card.callId);
      if (blocks.length) {
        out.textContent = pretty(blocks.length === 1 ? blocks[0] : blocks);
        note.textContent = 'after budgets and media routing, for this provider\'s default model';
      } else {
        out.textContent = pretty(body);
        note.textContent = 'no block names this call: the whole request';
      }
    } catch (err) {
      out.textContent = '';
      showError(out, err);
    }
  };
  select.addEventListener('change', show);
  show();
  return box;
}
