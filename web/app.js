//! toolwire's web app: the session list at `/`, and a session at `/sessions/{id}` where
//! each tool call is a card (`data-call-id`, `data-state`) filled from the stored messages
//! and then kept live by the session's event feed, which resumes after a drop without
//! loss. Everything a tool, a model or a server sent is put in the page as text or through
//! the renderer, never as markup.
//!
//! Card states, as the AI SDK's tool parts name them: input-available (running),
//! approval-requested, approval-responded, output-available, output-error, output-denied,
//! and input-requested (a question or form waits for the person).

import { h, renderResult, renderWidget, registerWidget } from './toolwire-render.js';
import { mountApp } from './mcp-app.js';

// MCP Apps: drawn by the host bridge when the page lends one (a tool call's card does).
registerWidget('mcp_app', (box, widget, opts) => {
  const handle = mountApp(box, widget, opts && opts.app);
  if (opts && opts.app && opts.app.mounted) opts.app.mounted(handle);
});

/** @typedef {import('./toolwire.d.ts').ToolResult} ToolResult */

const ID = /^[A-Za-z0-9_-]{1,128}$/;
const BLOB = /^blake3:[0-9a-f]{64}$/;
/** How long after its last link dialog closed an app must wait to ask again. */
const LINK_GAP_MS = 2000;

// ---- small DOM helpers: text only, never HTML -------------------------------------------

/** A URL for a stored blob; anything that is not a blob key gets no URL. */
export function resourceUrl(ref) {
  const key = typeof ref === 'string' ? ref : ref && (ref.blob || ref.uri);
  return BLOB.test(key || '') ? `/api/resources/${key}/content` : null;
}

/** Calls the API; an error answer becomes an Error carrying its message. */
async function api(path, options = {}) {
  const init = { credentials: 'same-origin', headers: {}, ...options };
  if (options.json !== undefined) {
    init.method = init.method || 'POST';
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(options.json);
  }
  const r = await fetch(path, init);
  if (r.status === 204) return null;
  const body = await r.json().catch(() => null);
  if (!r.ok) {
    const msg = body && body.error ? body.error.message : `${r.status} ${r.statusText}`;
    const err = new Error(msg);
    err.status = r.status;
    throw err;
  }
  return body;
}

function showError(where, err) {
  where.append(h('p', { class: 'error', role: 'alert' }, String(err && err.message ? err.message : err)));
}

function when(ms) {
  try {
    return new Date(ms).toLocaleString();
  } catch {
    return '';
  }
}

// ---- the session list ---------------------------------------------------------------------

async function listView(main) {
  document.title = 'toolwire';
  main.replaceChildren(h('h1', {}, 'Sessions'));
  const form = h('form', { class: 'new-session' },
    h('input', { name: 'title', placeholder: 'title of a new session', maxlength: 200 }),
    h('button', { type: 'submit' }, 'New session'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      const s = await api('/api/sessions', { json: { title: form.title.value } });
      location.assign(`/sessions/${s.id}`);
    } catch (err) {
      showError(main, err);
    }
  });
  main.append(form);
  try {
    const { sessions } = await api('/api/sessions?limit=200');
    const list = h('ul', { class: 'sessions' });
    for (const s of sessions) {
      if (!ID.test(s.id)) continue;
      list.append(h('li', { 'data-session-id': s.id },
        h('a', { href: `/sessions/${s.id}` }, s.title || s.id),
        h('span', { class: 'muted' }, ` ${s.messageCount} messages · ${when(s.updatedAtMs)}`)));
    }
    if (!sessions.length) list.append(h('li', { class: 'muted' }, 'No sessions yet.'));
    main.append(list);
  } catch (err) {
    showError(main, err);
  }
}

/** What a tool says of itself: whether it asks first, and its MCP annotations (hints
 * from its server, shown as it declared them). */
function toolHints(tool) {
  if (!tool) return [];
  const out = [];
  if (tool.approval === 'always') out.push('asks for approval');
  const a = tool.annotations || {};
  if (a.readOnlyHint === true) out.push('read-only');
  else if (a.destructiveHint === true) out.push('destructive');
  if (a.idempotentHint === true) out.push('idempotent');
  if (a.openWorldHint === true) out.push('open world');
  return out;
}

// ---- a tool call's card -------------------------------------------------------------------

const STATUS_STATE = {
  success: 'output-available',
  partial: 'output-available',
  error: 'output-error',
  denied: 'output-denied',
  cancelled: 'output-error',
  timeout: 'output-error',
};

class Card {
  constructor(view, callId, name, input) {
    this.view = view;
    this.callId = callId;
    this.name = name;
    this.input = input;
    this.result = null;
    this.el = h('article', { class: 'card', 'data-call-id': callId, 'data-state': 'input-available', 'data-tool': name });
    this.statusEl = h('span', { class: 'status' }, 'running');
    this.durationEl = h('span', { class: 'duration muted' });
    this.progressEl = h('progress', { hidden: true, max: 1, value: 0 });
    this.progressText = h('span', { class: 'progress-text muted' });
    this.suspensionEl = h('div', { class: 'suspension' });
    this.resultEl = h('div', { class: 'result' });
    this.detailEl = h('pre', { class: 'detail', hidden: true });
    this.linksEl = h('span', { class: 'links' });
    // Stops the call while it runs or waits for a person; it then gets a cancelled result.
    this.stopEl = h('button', { type: 'button', class: 'stop', title: 'Stop this call', onclick: () => this.stop() }, 'Stop');
    const detailButton = (label, what) => h('button', { type: 'button', 'data-show': what, onclick: () => this.toggleDetail(what) }, label);
    this.el.append(
      h('header', {}, h('span', { class: 'tool' }, name), this.statusEl, this.durationEl, this.linksEl, this.stopEl),
      h('details', { class: 'args' }, h('summary', {}, 'arguments'), h('pre', {}, pretty(input))),
      h('div', { class: 'progress' }, this.progressEl, this.progressText),
      this.suspensionEl,
      this.resultEl,
      h('footer', {},
        detailButton('stored JSON', 'json'),
        detailButton('diagnostics', 'diagnostics'),
        detailButton('_meta', 'meta'),
        h('span', { class: 'schema-check muted' })),
      this.detailEl);
  }

  setState(state, label) {
    this.el.dataset.state = state;
    this.statusEl.textContent = label || state;
    this.stopEl.hidden = /^output-/.test(state);
  }

  async stop() {
    this.stopEl.disabled = true;
    try {
      await api(`/api/sessions/${this.view.id}/calls/${encodeURIComponent(this.callId)}/cancel`, { json: {} });
    } catch (err) {
      this.stopEl.disabled = false;
      showError(this.suspensionEl, err);
    }
  }

  progress(done, total, message) {
    this.progressEl.hidden = false;
    if (total) {
      this.progressEl.max = total;
      this.progressEl.value = Math.min(done, total);
    } else {
      this.progressEl.removeAttribute('value');
    }
    this.progressText.textContent = `${done}${total ? ` / ${total}` : ''}${message ? ` ${message}` : ''}`;
  }

  /** The suspension's controls: approve and deny, or a form for the answer. */
  suspend(suspension) {
    if (!suspension || !ID.test(suspension.id || '')) return;
    this.suspension = suspension;
    const approval = suspension.reason === 'approval';
    this.setState(approval ? 'approval-requested' : 'input-requested', approval ? 'needs approval' : 'needs an answer');
    const box = h('div', { class: 'ask', 'data-suspension-id': suspension.id },
      h('p', { class: 'prompt' }, suspension.prompt || ''));
    const send = async (resolution) => {
      for (const b of box.querySelectorAll('button, input, select, textarea')) b.disabled = true;
      try {
        await api(`/api/sessions/${this.view.id}/suspensions/${suspension.id}`, { json: resolution });
        // The result may have arrived on the feed before this answer did.
        if (/requested$/.test(this.el.dataset.state)) {
          this.setState('approval-responded', resolution.type === 'deny' ? 'denied, waiting' : 'answered, running');
        }
        box.remove();
      } catch (err) {
        for (const b of box.querySelectorAll('button, input, select, textarea')) b.disabled = false;
        showError(box, err);
      }
    };
    if (approval) {
      box.append(
        h('button', { type: 'button', class: 'approve', onclick: () => send({ type: 'approve' }) }, 'Approve'),
        h('button', { type: 'button', class: 'deny', onclick: () => send({ type: 'deny', reason: 'denied in the web app' }) }, 'Deny'));
    } else {
      const form = schemaForm(suspension.inputSchema, 'answer');
      form.el.addEventListener('submit', (e) => {
        e.preventDefault();
        const value = form.value();
        if (value instanceof Error) return showError(box, value);
        send({ type: 'answer', value });
      });
      form.el.append(
        h('button', { type: 'submit', class: 'answer' }, 'Answer'),
        h('button', { type: 'button', class: 'deny', onclick: () => send({ type: 'deny', reason: 'declined in the web app' }) }, 'Decline'),
        // MCP's third answer: the question is dismissed, not refused.
        h('button', { type: 'button', class: 'cancel', onclick: () => send({ type: 'cancel', reason: 'cancelled in the web app' }) }, 'Cancel'));
      box.append(form.el);
    }
    this.suspensionEl.replaceChildren(box);
  }

  resolved() {
    this.suspensionEl.replaceChildren();
    if (this.el.dataset.state !== 'output-available') this.setState('approval-responded', 'answered, running');
  }

  /** @param {ToolResult} result */
  setResult(result) {
    this.result = result;
    if (result.status === 'suspended') {
      this.suspend(result.suspension);
      return;
    }
    this.suspensionEl.replaceChildren();
    this.progressEl.hidden = true;
    this.setState(STATUS_STATE[result.status] || 'output-available', result.status);
    const ms = result.metadata && result.metadata.durationMs;
    this.durationEl.textContent = typeof ms === 'number' ? ` ${ms} ms` : '';
    const child = result.metadata && result.metadata.childSessionId;
    this.linksEl.replaceChildren();
    if (typeof child === 'string' && ID.test(child)) {
      this.linksEl.append(h('a', { href: `/sessions/${child}`, class: 'child-session' }, 'open the subagent session'));
    }
    // Drawn when the card nears the viewport: a long session costs only what shows.
    this.drawn = false;
    this.view.whenVisible(this, () => this.draw());
    this.el.querySelector('.schema-check').textContent = schemaCheck(result, this.view.tools.get(this.name));
    if (!this.detailEl.hidden) this.toggleDetail(this.detailEl.dataset.what, true);
  }

  draw() {
    if (this.drawn || !this.result) return;
    this.drawn = true;
    try {
      renderResult(this.resultEl, this.result, { resourceUrl, sandboxOrigin: this.view.info.sandboxOrigin, app: this.view.appHost(this) });
    } catch (err) {
      this.resultEl.replaceChildren();
      showError(this.resultEl, `cannot show this result: ${err.message}`);
    }
  }

  toggleDetail(what, keep) {
    if (!keep && !this.detailEl.hidden && this.detailEl.dataset.what === what) {
      this.detailEl.hidden = true;
      return;
    }
    const r = this.result || {};
    const value = what === 'json' ? r
      : what === 'diagnostics' ? (r.diagnostics || [])
        : ((r.metadata && r.metadata.mcp) || {});
    this.detailEl.dataset.what = what;
    this.detailEl.textContent = pretty(value);
    this.detailEl.hidden = false;
  }
}

function pretty(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** Whether the result's structured value matched the tool's outputSchema. The executor
 * checks it before storing: a mismatch is stored as an `invalid_output` error. */
function schemaCheck(result, tool) {
  if (!tool || !tool.outputSchema) return '';
  if (result.error && result.error.code === 'invalid_output') return `outputSchema: does not match (${result.error.message})`;
  return result.status === 'success' || result.status === 'partial' ? 'outputSchema: matched' : '';
}

// ---- forms built from a JSON Schema ---------------------------------------------------------

/** A form for `schema`: one field per property of an object schema, else one field.
 * Returns the form and a function that reads its value (or an Error). */
export function schemaForm(schema, name) {
  const el = h('form', { class: 'schema-form' });
  const props = schema && schema.type === 'object' && schema.properties && typeof schema.properties === 'object'
    ? schema.properties : null;
  const required = new Set(Array.isArray(schema && schema.required) ? schema.required : []);
  const fields = [];
  const add = (key, prop, label) => {
    const f = field(key, prop || {}, required.has(key));
    fields.push([key, f]);
    el.append(h('label', {}, h('span', {}, label, required.has(key) ? ' *' : ''), f.input,
      prop && prop.description ? h('small', { class: 'muted' }, prop.description) : null));
  };
  if (props) {
    for (const [key, prop] of Object.entries(props)) add(key, prop, (prop && prop.title) || key);
  } else {
    add(name, schema || { type: 'string' }, name);
  }
  const value = () => {
    const out = {};
    for (const [key, f] of fields) {
      const v = f.read();
      if (v instanceof Error) return new Error(`${key}: ${v.message}`);
      if (v !== undefined) out[key] = v;
      else if (required.has(key)) return new Error(`${key} is required`);
    }
    return props ? out : out[name];
  };
  return { el, value };
}

/** The choices a schema offers: `enum` (labelled by `enumNames`), or `oneOf`/`anyOf` of
 * `const`s (labelled by their titles); null when it offers none. */
function choicesOf(prop) {
  if (!prop || typeof prop !== 'object') return null;
  if (Array.isArray(prop.enum)) {
    const names = Array.isArray(prop.enumNames) ? prop.enumNames : [];
    return prop.enum.map((value, i) => ({ value, label: String(names[i] ?? value) }));
  }
  const alts = Array.isArray(prop.oneOf) ? prop.oneOf : Array.isArray(prop.anyOf) ? prop.anyOf : null;
  if (alts && alts.length && alts.every((o) => o && typeof o === 'object' && 'const' in o)) {
    return alts.map((o) => ({ value: o.const, label: String(o.title ?? o.const) }));
  }
  return null;
}

const FORMAT_INPUT = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };

function field(key, prop, required) {
  const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== 'null') : prop.type;
  const multi = type === 'array' ? choicesOf(prop.items) : null;
  if (multi) {
    const input = h('select', { name: key, multiple: true, size: Math.min(multi.length, 6) },
      multi.map((c, i) => h('option', { value: String(i) }, c.label)));
    const defaults = Array.isArray(prop.default) ? prop.default : [];
    for (const [i, c] of multi.entries()) input.options[i].selected = defaults.includes(c.value);
    return { input, read: () => [...input.selectedOptions].map((o) => multi[Number(o.value)].value) };
  }
  const choices = choicesOf(prop);
  if (choices) {
    const input = h('select', { name: key }, required ? null : h('option', { value: '' }, ''),
      choices.map((c, i) => h('option', { value: String(i) }, c.label)));
    const at = choices.findIndex((c) => c.value === prop.default);
    if (at >= 0) input.value = String(at);
    return { input, read: () => (input.value === '' ? undefined : choices[Number(input.value)].value) };
  }
  if (type === 'boolean') {
    const input = h('input', { type: 'checkbox', name: key });
    input.checked = prop.default === true;
    return { input, read: () => input.checked };
  }
  if (type === 'integer' || type === 'number') {
    const input = h('input', { type: 'number', name: key, step: type === 'integer' ? 1 : 'any' });
    if (prop.default !== undefined) input.value = String(prop.default);
    return {
      input,
      read: () => {
        if (input.value === '') return undefined;
        const n = Number(input.value);
        return Number.isFinite(n) ? n : new Error('not a number');
      },
    };
  }
  if (type === 'string' || type === undefined && !prop.properties) {
    const long = (prop.maxLength || 0) > 200 || /command|text|content|body/i.test(key);
    const input = long ? h('textarea', { name: key, rows: 3 })
      : h('input', { name: key, type: FORMAT_INPUT[prop.format] || 'text' });
    if (typeof prop.default === 'string') input.value = prop.default;
    return { input, read: () => (input.value === '' && !required ? undefined : input.value) };
  }
  // Objects and arrays: JSON text.
  const input = h('textarea', { name: key, rows: 3, placeholder: 'JSON' });
  if (prop.default !== undefined) input.value = pretty(prop.default);
  return {
    input,
    read: () => {
      if (input.value.trim() === '') return undefined;
      try {
        return JSON.parse(input.value);
      } catch {
        return new Error('not valid JSON');
      }
    },
  };
}

// ---- a session ------------------------------------------------------------------------------

class SessionView {
  constructor(main, id) {
    this.main = main;
    this.id = id;
    this.cards = new Map();
    this.tools = new Map();
    this.timeline = h('div', { class: 'timeline', 'aria-live': 'polite' });
    this.streaming = null;
    this.source = null;
    this.after = 0;
    this.pendingDraw = new Map();
    this.waiters = new Map();
    this.apps = [];
    // Link dialogs: whether one is open, and when each app's last one closed.
    this.linkDialogOpen = false;
    this.linkClosedAt = new Map();
    this.modelContext = new Map();
    this.observer = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (!e.isIntersecting) continue;
        const draw = this.pendingDraw.get(e.target);
        this.pendingDraw.delete(e.target);
        this.observer.unobserve(e.target);
        if (draw) draw();
      }
    }, { rootMargin: '2000px 0px' });
  }

  /** Runs `draw` once `card` is within two thousand pixels of the viewport. */
  whenVisible(card, draw) {
    this.pendingDraw.set(card.el, draw);
    this.observer.observe(card.el);
  }

  async start() {
    // The session is fetched at once, beside what the view needs first.
    this.first = api(`/api/sessions/${this.id}`);
    this.first.catch(() => {});
    const [info, tools] = await Promise.all([api('/api/info'), api('/api/tools')]);
    for (const t of tools) this.tools.set(t.name, t);
    this.info = info;
    this.main.replaceChildren(
      h('p', {}, h('a', { href: '/' }, '← sessions')),
      h('h1', { class: 'title' }),
      this.timeline,
      info.provider ? this.chatBox() : this.playground());
    await this.load();
    this.follow();
  }

  /** Draws the timeline from the stored messages. */
  async load() {
    const first = this.first;
    this.first = null;
    const { session, messages, lastEventSeq } = await (first || api(`/api/sessions/${this.id}`));
    document.title = `${session.title || session.id} · toolwire`;
    this.main.querySelector('.title').textContent = session.title || session.id;
    document.getElementById('where').textContent = session.id;
    const apps = this.apps.splice(0);
    await Promise.all(apps.map((a) => a.teardown('redrawn')));
    this.cards.clear();
    this.observer.disconnect();
    this.pendingDraw.clear();
    this.streaming = null;
    this.timeline.replaceChildren();
    for (const m of messages) this.message(m);
    // Pending calls whose result is not stored yet (e.g. waiting for approval after a
    // restart) still get their controls.
    const pending = await api(`/api/sessions/${this.id}/suspensions`);
    for (const p of pending) {
      const card = this.card(p.call.id, p.call.name, p.call.input);
      card.suspend(p.suspension);
    }
    this.after = Math.max(this.after, lastEventSeq || 0);
  }

  message(m) {
    const c = m.content || {};
    if (m.role === 'user') {
      if (/^toolwire call /.test(c.text || '')) return; // the record of a direct call
      this.timeline.append(h('div', { class: 'msg user' }, c.text || ''));
    } else if (m.role === 'assistant') {
      if (c.text) this.timeline.append(h('div', { class: 'msg assistant' }, c.text));
      for (const call of c.toolCalls || []) this.card(call.id, call.name, call.input);
    } else if (m.role === 'tool_result') {
      // A stored result for a call that already has one (a reused id: a hostile model or
      // tool) gets its own card; nothing stored is hidden.
      const had = this.cards.get(c.callId);
      if (had && had.result) this.cards.delete(c.callId);
      this.card(c.callId, c.toolName, had && had.result ? had.input : undefined).setResult(c);
      this.settle(c);
    } else if (m.role === 'widget') {
      this.widget(c.widget);
    }
  }

  card(callId, name, input) {
    let card = this.cards.get(callId);
    if (!card) {
      card = new Card(this, callId, name || 'tool', input === undefined ? {} : input);
      this.cards.set(callId, card);
      this.timeline.append(card.el);
    }
    return card;
  }

  widget(widget) {
    if (!widget) return;
    this.timeline.append(h('div', { class: 'msg widget' }, renderWidget(widget, { resourceUrl })));
  }

  /** The event feed, resumed from the last event seen after any drop. */
  follow() {
    const conn = document.getElementById('conn');
    // Waits between reopenings double up to 30 s: a server at its feed cap (503) or
    // restarting is not asked again every second by every open page.
    let wait = 1000;
    const reopen = async () => {
      try {
        const r = await fetch(`/api/sessions/${this.id}`, { method: 'GET' });
        if (r.status === 404) {
          // The session was deleted: its feed is over, nothing to reopen.
          conn.dataset.state = 'ended';
          conn.title = 'this session was deleted';
          return;
        }
      } catch { /* the server is away: try again later */ }
      setTimeout(open, wait + Math.random() * 250);
      wait = Math.min(wait * 2, 30000);
    };
    const open = () => {
      if (this.source) this.source.close();
      const source = new EventSource(`/api/sessions/${this.id}/events?after=${this.after}`);
      this.source = source;
      conn.dataset.state = 'connecting';
      source.onopen = () => {
        conn.dataset.state = 'live';
        wait = 1000;
      };
      source.onerror = () => {
        conn.dataset.state = 'reconnecting';
        // EventSource retries with Last-Event-ID on its own unless the server closed it
        // for good (a 503, a deleted session); then open afresh from the last event
        // applied, after a wait.
        if (source.readyState === EventSource.CLOSED) reopen();
      };
      const onEvent = (e) => {
        let ev;
        try {
          ev = JSON.parse(e.data);
        } catch {
          return;
        }
        if (typeof ev.seq !== 'number' || ev.seq <= this.after) return;
        this.after = ev.seq;
        this.apply(ev);
      };
      for (const type of ['tool_call_started', 'progress', 'tool_result', 'suspended', 'resolved',
        'assistant_delta', 'turn_started', 'turn_ended', 'widget', 'session_started', 'session_ended', 'message']) {
        source.addEventListener(type, onEvent);
      }
    };
    this.reconnect = open;
    open();
  }

  apply(ev) {
    switch (ev.type) {
      case 'tool_call_started':
        this.card(ev.callId, ev.toolName, ev.input);
        break;
      case 'progress':
        this.card(ev.callId).progress(ev.done, ev.total, ev.message);
        break;
      case 'tool_result':
        if (ev.result) {
          this.card(ev.result.callId, ev.result.toolName).setResult(ev.result);
          this.settle(ev.result);
        }
        break;
      case 'suspended':
        this.card(ev.callId).suspend(ev.suspension);
        break;
      case 'resolved':
        this.card(ev.callId).resolved();
        break;
      case 'widget':
        this.widget(ev.widget);
        break;
      case 'turn_started':
        this.streaming = h('div', { class: 'msg assistant streaming' });
        this.timeline.append(this.streaming);
        break;
      case 'assistant_delta':
        if (!this.streaming) {
          this.streaming = h('div', { class: 'msg assistant streaming' });
          this.timeline.append(this.streaming);
        }
        this.streaming.append(document.createTextNode(ev.text || ''));
        break;
      case 'turn_ended':
        // The stored messages are the record: redraw from them once the turn is done.
        this.load().catch((err) => showError(this.timeline, err));
        break;
      default:
        break;
    }
  }

  /** Hands a final result to whoever waits for its call (an MCP App's tools/call). */
  settle(result) {
    const waiter = result && this.waiters.get(result.callId);
    if (waiter && result.status !== 'suspended') {
      this.waiters.delete(result.callId);
      waiter(result);
    }
  }

  /** The final result of call `callId`. The POST that started the call answers only once
   * the call runs, and a fast call's result event can come first: then its card holds the
   * result already, and it is taken from there instead of waiting for an event that has
   * passed. */
  resultOf(callId) {
    const card = this.cards.get(callId);
    if (card && card.result && card.result.status !== 'suspended') return Promise.resolve(card.result);
    return new Promise((resolve) => this.waiters.set(callId, resolve));
  }

  /** Whether `u` is one of this server's own: the page's origin or the sandbox's, under
   * any name of a loopback address (`localhost`, `127.x.y.z`, `[::1]`) with the same port.
   * A link there would open a stored document or an API route with the page's rights. */
  ownOrigin(u) {
    const port = (x) => x.port || (x.protocol === 'https:' ? '443' : '80');
    const own = [location];
    try {
      if (this.info.sandboxOrigin) own.push(new URL(this.info.sandboxOrigin));
    } catch { /* no sandbox: nothing more is ours */ }
    const host = u.hostname.replace(/\.$/, '').toLowerCase();
    const loopback = host === 'localhost' || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host)
      || host === '[::1]' || host === '0.0.0.0' || host === '[::]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(host);
    return own.some((o) => u.origin === o.origin || (loopback && port(u) === port(o)));
  }

  /** Opens a link that the MCP App in `card` asked for, once the person agrees in a dialog
   * that names the app. Refused without asking: anything but http(s), a URL with
   * credentials (`https://trusted.example@elsewhere`), and this server's own origins (its
   * pages and everything under /api). Refused too while a link dialog is open, and for
   * LINK_GAP_MS after the app's last one closed: an app cannot stack dialogs or ask again
   * and again until the person clicks OK. */
  openLink(card, url) {
    let u;
    try {
      u = new URL(url);
    } catch {
      return false;
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return false;
    if (u.username || u.password || this.ownOrigin(u)) return false;
    const sep = card.name.indexOf('__');
    const server = sep > 0 ? card.name.slice(0, sep) : null;
    // Limited per server: one server's apps in several cards share the limit.
    const who = server || card.name;
    if (this.linkDialogOpen || Date.now() - (this.linkClosedAt.get(who) || 0) < LINK_GAP_MS) return false;
    this.linkDialogOpen = true;
    let yes = false;
    try {
      const app = server ? `The app of the tool "${card.name.slice(sep + 2)}" (MCP server "${server}")` : `The app of the tool "${card.name}"`;
      // eslint-disable-next-line no-alert
      yes = window.confirm(`${app} asks to open this link in a new tab:\n\n${u.href}\n\nOpen it?`);
    } finally {
      this.linkDialogOpen = false;
      this.linkClosedAt.set(who, Date.now());
    }
    if (!yes) return false;
    window.open(u.href, '_blank', 'noopener,noreferrer');
    return true;
  }

  /** What an MCP App in `card` may ask of the page: tools of its own server that apps
   * may call (through the same approvals as any call), links the person agrees to open,
   * messages to the model when there is one, and logs. */
  appHost(card) {
    const sep = card.name.indexOf('__');
    const prefix = sep > 0 ? card.name.slice(0, sep + 2) : null;
    const tool = this.tools.get(card.name);
    return {
      sandboxOrigin: this.info.sandboxOrigin,
      version: this.info.version,
      tool: tool ? { ...tool, name: prefix ? tool.name.slice(prefix.length) : tool.name } : undefined,
      input: card.input,
      result: card.result,
      mounted: (handle) => this.apps.push(handle),
      callTool: async (name, args) => {
        const full = prefix ? `${prefix}${name}` : null;
        const schema = full && this.tools.get(full);
        if (!schema) throw new Error(`no tool ${name} on this app's server`);
        const visibility = schema._meta && schema._meta.ui && schema._meta.ui.visibility;
        if (Array.isArray(visibility) && !visibility.includes('app')) throw new Error(`${name} is not callable by apps`);
        const accepted = await api(`/api/sessions/${this.id}/calls`, { json: { tool: full, input: args } });
        return this.resultOf(accepted.callId);
      },
      readResource: (uri) => api(`/api/tools/${encodeURIComponent(card.name)}/resource`, { json: { uri } }),
      openLink: (url) => this.openLink(card, url),
      sendMessage: async (params) => {
        if (!this.info.provider) return false;
        const text = (Array.isArray(params.content) ? params.content : [])
          .filter((c) => c && c.type === 'text' && typeof c.text === 'string').map((c) => c.text).join('\n');
        if (!text.trim()) return false;
        await api(`/api/sessions/${this.id}/messages`, { json: { text } });
        return true;
      },
      updateModelContext: (params) => this.modelContext.set(card.callId, params),
      log: (params) => console.info('MCP App', card.callId, params),
    };
  }

  chatBox() {
    const form = h('form', { class: 'chat' },
      h('textarea', { name: 'text', rows: 3, placeholder: `Message ${this.info.model || 'the model'}` }),
      h('button', { type: 'submit' }, 'Send'));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const typed = form.text.value;
      if (!typed.trim()) return;
      form.text.value = '';
      // What MCP Apps asked to put in the model's context since the last message goes
      // with this one (the extension lets a host defer it until then).
      const context = [...this.modelContext.entries()].map(([callId, p]) => {
        const blocks = (Array.isArray(p.content) ? p.content : []).filter((c) => c && c.type === 'text').map((c) => c.text);
        const data = p.structuredContent ? JSON.stringify(p.structuredContent) : '';
        return `[Context from the app of call ${callId}: ${[...blocks, data].filter(Boolean).join(' ')}]`;
      });
      this.modelContext.clear();
      const text = [...context, typed].join('\n');
      this.timeline.append(h('div', { class: 'msg user pending' }, typed));
      try {
        await api(`/api/sessions/${this.id}/messages`, { json: { text } });
      } catch (err) {
        showError(this.timeline, err);
      }
    });
    return form;
  }

  /** Without a model: pick a tool, fill a form built from its inputSchema, call it. */
  playground() {
    const box = h('section', { class: 'playground' }, h('h2', {}, 'Call a tool'));
    const select = h('select', { name: 'tool' });
    const fillTools = () => select.replaceChildren(
      ...[...this.tools.values()].map((t) => h('option', { value: t.name }, t.name)));
    fillTools();
    const description = h('p', { class: 'muted' });
    const hints = h('p', { class: 'tool-hints' });
    const holder = h('div');
    let form = null;
    const pick = () => {
      const tool = this.tools.get(select.value);
      description.textContent = tool ? tool.description || '' : '';
      hints.replaceChildren(...toolHints(tool).map((t) => h('span', { class: `hint hint-${t.replace(/ /g, '-')}` }, t)));
      form = schemaForm(tool && tool.inputSchema, 'input');
      form.el.append(h('button', { type: 'submit' }, 'Call'));
      form.el.addEventListener('submit', async (e) => {
        e.preventDefault();
        const input = form.value();
        if (input instanceof Error) return showError(holder, input);
        try {
          await api(`/api/sessions/${this.id}/calls`, { json: { tool: select.value, input: input || {} } });
        } catch (err) {
          showError(holder, err);
        }
      });
      holder.replaceChildren(form.el);
    };
    select.addEventListener('change', pick);
    // Servers connect in the background: their tools join the list when they are ready.
    const servers = serverStates(async () => {
      const chosen = select.value;
      for (const t of await api('/api/tools')) this.tools.set(t.name, t);
      fillTools();
      if (chosen) select.value = chosen;
      if (!form) pick();
    });
    box.append(servers, h('label', {}, 'Tool ', select), hints, description, holder);
    if (this.tools.size) pick();
    return box;
  }
}

/** A line per MCP server with its state (connecting, ready, failed and why, restarting),
 * kept current: polled every 2 s while one is on its way, every 15 s otherwise.
 * `onReady` runs when a server became ready, so its tools can be fetched. */
function serverStates(onReady) {
  const list = h('ul', { class: 'servers', 'aria-label': 'MCP servers', 'aria-live': 'polite' });
  const ready = new Set();
  let shown = false;
  const poll = async () => {
    let servers = [];
    try {
      servers = (await api('/api/servers')).servers || [];
    } catch {
      servers = [];
    }
    list.replaceChildren(...servers.map((s) => {
      const what = s.state === 'ready' ? `ready · ${s.tools.length} tools`
        : s.reason ? `${s.state}: ${s.reason}` : `${s.state}…`;
      return h('li', { class: `server server-${s.state}`, 'data-state': s.state },
        h('strong', {}, s.name), ' ', what);
    }));
    const newly = servers.filter((s) => s.state === 'ready' && !ready.has(s.name));
    for (const s of servers) if (s.state === 'ready') ready.add(s.name); else ready.delete(s.name);
    if (newly.length) onReady();
    const moving = servers.some((s) => s.state === 'connecting' || s.state === 'restarting');
    // Until the list is on the page, then for as long as it stays there.
    shown ||= list.isConnected;
    if (!shown || list.isConnected) setTimeout(poll, moving ? 2000 : 15000);
  };
  poll();
  return list;
}

// ---- routing --------------------------------------------------------------------------------

async function main() {
  const main = document.getElementById('main');
  const path = location.pathname;
  const m = path.match(/^\/sessions\/([^/]+)$/);
  try {
    if (path === '/') await listView(main);
    else if (m && ID.test(m[1])) {
      const view = new SessionView(main, m[1]);
      window.toolwireView = view;
      await view.start();
    } else {
      main.replaceChildren(h('p', { class: 'error' }, 'No such page.'));
    }
  } catch (err) {
    main.replaceChildren();
    showError(main, err);
  }
  // Tests and people measuring first render read this mark.
  performance.mark('toolwire-rendered');
  document.body.dataset.ready = 'true';
}

main();
