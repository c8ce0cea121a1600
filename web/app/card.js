// A tool call's card (`data-call-id`, `data-state`): arguments, status, duration, live
// progress, the approval or question waiting for the person, and the result drawn by the
// renderer once the card nears the viewport.
//
// Card states, as the AI SDK's tool parts name them: input-available (running),
// approval-requested, approval-responded, output-available, output-error, output-denied,
// and input-requested (a question or form waits for the person); and one of toolwire's
// own, output-cancelled: a call stopped or dismissed by a person is no failure.

import { bytes, renderResult } from '../toolwire-render.js';
import { api, ID, resourceUrl } from './api.js';
import { h, pretty, showError } from './util.js';
import { schemaForm } from './forms.js';
import { modelView } from './modelview.js';
import { menuButton } from './menu.js';

/** @typedef {import('../toolwire.d.ts').ToolResult} ToolResult */

const STATUS_STATE = {
  success: 'output-available',
  partial: 'output-available',
  error: 'output-error',
  denied: 'output-denied',
  cancelled: 'output-error',
  timeout: 'output-error',
};

/** The icon of each kind of value (web/icons/). */
const KIND_ICON = {
  text: 'text', markdown: 'text', code: 'code', file_content: 'file', diff: 'diff', file_list: 'folder', table: 'table',
  image: 'image', audio: 'audio', video: 'video', file: 'file', resource_link: 'link', structured: 'braces', tree: 'tree',
  raw: 'braces', mcp_app: 'app',
};

let cardSeq = 0;

/** The card every card is cloned from: its header (fold, tool, status, duration, time
 * waited, size, time, links), the question box and the body (arguments, result). */
let prototypeCard = null;
function cardPrototype() {
  if (!prototypeCard) {
    prototypeCard = h('article', { class: 'card', 'data-state': 'input-available', tabindex: -1 },
      h('header', {},
        h('button', { type: 'button', class: 'fold', 'aria-expanded': 'true' }),
        h('span', { class: 'tool' }),
        h('span', { class: 'status' }, 'running'),
        h('span', { class: 'head-end' },
          h('span', { class: 'duration' }),
          // The time the call waited for a person (approval, answer), apart from its duration.
          h('span', { class: 'waited', hidden: true }),
          h('span', { class: 'size' }),
          h('time', { class: 'at' }),
          h('span', { class: 'links' }))),
      h('div', { class: 'suspension' }),
      h('div', { class: 'body' }, h('details', { class: 'args' }, h('summary', {}, 'arguments')), h('div', { class: 'result' })));
  }
  return prototypeCard;
}

export class Card {
  constructor(view, callId, name, input, at) {
    this.view = view;
    this.callId = callId;
    this.name = name;
    this.input = input;
    this.result = null;
    /** Resource reads kept with the result, by URI (the latest read of each). */
    this.reads = new Map();
    /** When the call was made (ms since the epoch), for the timestamp and the timer. */
    this.at = typeof at === 'number' ? at : Date.now();
    this.search = null;
    const n = (cardSeq += 1);
    const server = view.catalogue ? view.catalogue.serverOf(name) : null;
    // A copy of one prototype card, filled in: cloning is several times cheaper than making
    // each element and attribute anew, which is most of a long session's first render.
    this.el = cardPrototype().cloneNode(true);
    const el = this.el;
    const header = el.firstChild;
    [this.foldEl, this.toolEl, this.statusEl, this.headEnd] = header.children;
    [this.durationEl, this.waitedEl, this.sizeEl] = this.headEnd.children;
    const time = this.headEnd.children[3];
    // (The time of day; its `datetime`, the full date, is written when the card is drawn.)
    this.linksEl = this.headEnd.children[4];
    this.suspensionEl = header.nextSibling;
    this.body = this.suspensionEl.nextSibling;
    const args = this.body.firstChild;
    this.resultEl = args.nextSibling;
    el.dataset.callId = callId;
    el.dataset.tool = name;
    el.setAttribute('aria-labelledby', `card-${n}-tool`);
    // The filter and the keyboard find a card from its element (a reused call id leaves
    // older cards out of the view's map).
    el.toolwireCard = this;
    this.toolEl.id = `card-${n}-tool`;
    this.toolEl.textContent = name;
    if (server) this.toolEl.after(h('span', { class: 'server-chip', title: `MCP server ${server.name}` }, server.name));
    this.body.id = `card-${n}-body`;
    this.foldEl.setAttribute('aria-controls', this.body.id);
    this.foldEl.setAttribute('aria-label', `Fold ${name}`);
    this.foldEl.addEventListener('click', () => this.setOpen(this.body.hidden));
    time.textContent = clock(this.at);
    this.timeEl = time;
    // The progress bar, the detail box and Stop are made when first needed: most cards of a
    // long session never show them. Stop stops the call while it runs or waits for a
    // person; it then gets a cancelled result.
    this.progressEl = null;
    this.detailEl = null;
    this.stopEl = null;
    // The arguments are written out when first opened: most cards never are.
    args.addEventListener('toggle', () => {
      if (args.open && !args.querySelector('pre')) args.append(h('pre', { tabindex: 0 }, pretty(this.input)));
    });
    this.footerEl = null;
    this.modelEl = null;
    this.view.running(this, true);
    // A card made and finished in one go (a load) never gets Stop; one still running
    // after this turn of the event loop does.
    // (A load of stored messages checks its cards once at its end instead: see session.js.)
    if (!view.loading) queueMicrotask(() => { if (!/^output-/.test(this.el.dataset.state)) this.ensureStop(); });
  }

  /** The card's buttons (details, copy, download), made when the card is first drawn or
   * asks something: a 10,000-call session does not build 100,000 buttons up front. */
  footer() {
    if (this.footerEl) return this.footerEl;
    // Each button has an icon; on a narrow card (a container query in app.css) only the
    // icons show, so the footer stays one row at 400 px. The name stays for assistive
    // technology (the label is hidden visually only) and as a tooltip.
    const labelled = (attrs, icon, label) => h('button', { type: 'button', class: `i ${icon}`, title: attrs.title || label, ...attrs },
      h('span', { class: 'label' }, label));
    const detailButton = (label, what, icon) => labelled({ 'data-show': what, 'aria-pressed': 'false' }, icon, label);
    const known = this.view.tools.has(this.name);
    this.copiedEl = h('span', { class: 'copied', role: 'status' });
    this.schemaEl = h('span', { class: 'schema-check' });
    // Copy and Download are menus: what to copy (arguments, text, stored JSON) and what to
    // save (the stored JSON, the MCP result as received).
    const copy = menuButton('Copy', 'i-copy', [
      labelled({ 'data-copy': 'input', title: 'Copy the arguments' }, 'i-terminal', 'Arguments'),
      labelled({ 'data-copy': 'text', title: 'Copy the result\'s text' }, 'i-text', 'Result text'),
      labelled({ 'data-copy': 'json', title: 'Copy the stored JSON' }, 'i-braces', 'Stored JSON'),
    ], { 'data-menu': 'copy' });
    this.rawEl = h('a', { class: 'i i-package', 'data-download': 'raw', hidden: true, title: 'Download the result exactly as the MCP server sent it' },
      h('span', { class: 'label' }, 'MCP result as received'));
    const save = menuButton('Download', 'i-download', [
      labelled({ 'data-download': 'json', title: 'Download the stored JSON' }, 'i-braces', 'Stored JSON'),
      this.rawEl,
    ], { 'data-menu': 'download' });
    this.footerEl = h('footer', {},
      h('div', { class: 'footer-row' },
        detailButton('Stored JSON', 'json', 'i-braces'),
        detailButton('Diagnostics', 'diagnostics', 'i-pulse'),
        detailButton('_meta', 'meta', 'i-tag'),
        detailButton('What the model saw', 'model', 'i-eye'),
        h('span', { class: 'sep', 'aria-hidden': 'true' }),
        copy.button, copy.list, save.button, save.list,
        // A direct call again, as it was or edited in the composer (when the tool is known).
        known ? h('span', { class: 'sep', 'data-rerun-sep': '', 'aria-hidden': 'true' }) : null,
        known ? labelled({ 'data-rerun': 'same', title: 'Call the tool again with the same arguments' }, 'i-rerun', 'Re-run') : null,
        known && this.view.pickTool ? labelled({ 'data-rerun': 'edit', title: 'Edit the arguments in the composer and call again' }, 'i-edit', 'Edit & re-run') : null,
        this.schemaEl),
      this.copiedEl);
    // One listener for every button of the footer (and of its menus).
    this.footerEl.addEventListener('click', (e) => {
      const b = e.target.closest('button');
      if (!b || b.dataset.menu) return;
      if (b.dataset.show === 'model') this.toggleModel();
      else if (b.dataset.show) this.toggleDetail(b.dataset.show);
      else if (b.dataset.copy) this.copy(b.dataset.copy);
      else if (b.dataset.download) this.download();
      else if (b.dataset.rerun === 'edit') this.view.pickTool(this.name, this.input);
      else if (b.dataset.rerun) this.rerun(b);
    });
    if (this.result) this.showSchema();
    this.body.append(this.footerEl);
    return this.footerEl;
  }

  /** Whether the result's structured value matched the tool's outputSchema, as an icon
   * and a label (the label hides on a narrow card; the tooltip keeps it). */
  showSchema() {
    const check = schemaCheck(this.result, this.view.tools.get(this.name));
    this.schemaEl.dataset.check = check.startsWith('outputSchema: matched') ? 'matched' : check ? 'mismatch' : '';
    this.schemaEl.title = check;
    this.schemaEl.className = `schema-check${check ? ` i ${this.schemaEl.dataset.check === 'matched' ? 'i-check-circle' : 'i-alert'}` : ''}`;
    this.schemaEl.replaceChildren(check ? h('span', { class: 'label' }, check) : '');
  }

  /** Shows or hides what the model was sent for this call (modelview.js). */
  toggleModel() {
    const button = this.el.querySelector('footer [data-show="model"]');
    if (this.modelEl) {
      this.modelEl.remove();
      this.modelEl = null;
      button.setAttribute('aria-pressed', 'false');
      return;
    }
    this.modelEl = modelView(this.view, this);
    this.body.append(this.modelEl);
    button.setAttribute('aria-pressed', 'true');
  }

  /** Says that a person made this call, not the model, and where (`web`, `cli`, `api`, or
   * `app:TOOL`, an MCP App's view): the stored call's `byPerson.via`. */
  madeBy(via) {
    if (this.byEl || typeof via !== 'string' || !via) return;
    this.via = via;
    // An MCP App's call (a monitor's poll) is the app's doing on the person's screen,
    // not something they typed: it says so.
    const app = via.startsWith('app:') ? via.slice(4).slice(0, 64) : null;
    this.byEl = app
      ? h('span', { class: 'by-person', title: `Made by the MCP App of ${app} on your screen, not by the model` }, `by the ${app} app`)
      : h('span', { class: 'by-person', title: `Made by a person through ${via.slice(0, 64)}, not by the model` }, `by you · ${via.slice(0, 64)}`);
    const chip = this.toolEl.nextElementSibling;
    (chip && chip.classList.contains('server-chip') ? chip : this.toolEl).after(this.byEl);
    this.view.joinSeries(this);
  }

  /** Whether the card is an earlier call of a folded series (an MCP App's calls of one
   * tool, session.js `joinSeries`): hidden whatever the filter says. */
  folded() {
    return Boolean(this.series && this.series.latest !== this && !this.series.open);
  }

  /** Shows, on the newest card of its series, how many earlier calls fold into it, as a
   * button that shows or folds them; `series` null takes it away. */
  seriesNote(series) {
    if (!series || !series.earlier.length) {
      if (this.seriesEl) this.seriesEl.remove();
      this.seriesEl = null;
      return;
    }
    if (!this.seriesEl) {
      this.seriesEl = h('button', { type: 'button', class: 'series' });
      this.seriesEl.addEventListener('click', () => this.view.toggleSeries(this.series));
      (this.byEl || this.toolEl).after(this.seriesEl);
    }
    const n = series.earlier.length;
    const calls = `${n} earlier call${n === 1 ? '' : 's'}`;
    this.seriesEl.textContent = series.open ? `fold ${calls}` : `+${calls}`;
    this.seriesEl.title = series.open
      ? `Fold the app's ${calls} of ${this.name} into this one`
      : `The app called ${this.name} ${n} time${n === 1 ? '' : 's'} before this: show those calls`;
    this.seriesEl.setAttribute('aria-expanded', String(series.open));
  }

  /** Takes over the series button of `from`, the series' newest card until this one
   * came: the same element moves, so a click pressed on it as a poll lands (its press
   * and release on one element, at the same place when the series' card is the last one)
   * is not lost, and keyboard focus on it stays. */
  adoptSeriesNote(from) {
    const el = from.seriesEl;
    from.seriesEl = null;
    if (!el || this.seriesEl) {
      if (el) el.remove();
      return;
    }
    const focused = document.activeElement === el;
    this.seriesEl = el;
    (this.byEl || this.toolEl).after(el);
    if (focused) el.focus({ preventScroll: true });
  }

  /** Folds or unfolds the card's body; an approval or question shows either way. A body
   * folded before it was drawn is drawn once unfolded and near the viewport: unfolding
   * all of a 10,000-call session draws what is on screen, not everything. */
  setOpen(open) {
    this.body.hidden = !open;
    this.foldEl.setAttribute('aria-expanded', String(open));
    if (open && this.result && !this.drawn) this.view.whenVisible(this, () => this.draw());
  }

  /** The text the filter searches: tool, arguments, status and the result's values
   * (built on the first search, not when the card is made). */
  searchText() {
    if (this.search === null) {
      let result = '';
      try {
        result = this.result ? JSON.stringify(this.result.output || this.result.error || '') : '';
      } catch { /* unreadable: tool and arguments only */ }
      this.search = `${this.name}\n${pretty(this.input)}\n${this.statusEl.textContent}\n${result.slice(0, 200000)}`.toLowerCase();
    }
    return this.search;
  }

  /** The kinds of the result's values (text, image, table, …). */
  kinds() {
    const out = this.result && Array.isArray(this.result.output) ? this.result.output : [];
    return out.map((v) => v && v.kind).filter((k) => typeof k === 'string');
  }

  /** Copies the arguments, the result's text, or the stored JSON. */
  async copy(what) {
    const r = this.result || {};
    const text = what === 'input' ? pretty(this.input)
      : what === 'json' ? pretty(r)
        : (Array.isArray(r.output) ? r.output : []).map(textOf).filter(Boolean).join('\n\n') || (r.error && r.error.message) || '';
    let ok = false;
    try {
      await navigator.clipboard.writeText(text);
      ok = true;
    } catch {
      ok = copyByHand(text);
    }
    this.copiedEl.textContent = ok ? `copied ${what === 'input' ? 'arguments' : what === 'json' ? 'JSON' : 'text'}` : 'cannot copy here';
    clearTimeout(this.copiedTimer);
    this.copiedTimer = setTimeout(() => { this.copiedEl.textContent = ''; }, 2000);
  }

  /** Calls the tool again with the same arguments; the new call gets its own card. */
  async rerun(button) {
    button.disabled = true;
    try {
      const accepted = await api(`/api/sessions/${this.view.id}/calls`, { json: { tool: this.name, input: this.input } });
      this.view.reveal(accepted.callId);
    } catch (err) {
      showError(this.footerEl, err);
    } finally {
      button.disabled = false;
    }
  }

  /** Downloads the stored result as a JSON file named after the call. */
  download() {
    const blob = new Blob([pretty(this.result || {})], { type: 'application/json' });
    const url = URL.createObjectURL(blob);
    const a = h('a', { href: url, download: `${this.name}-${this.callId}.json`.replace(/[^\w.-]+/g, '_') });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  /** "MCP result": the payload the tool's server sent, as received, when the server kept
   * it beside the result (`metadata.rawRef`, a stored blob). */
  rawLink() {
    const url = resourceUrl(this.result && this.result.metadata && this.result.metadata.rawRef);
    this.rawEl.hidden = !url;
    if (url) {
      this.rawEl.href = url;
      this.rawEl.download = `${this.name}-${this.callId}.mcp.json`.replace(/[^\w.-]+/g, '_');
    }
  }

  setState(state, label) {
    this.el.dataset.state = state;
    this.statusEl.textContent = label || state;
    const done = /^output-/.test(state);
    if (this.stopEl) this.stopEl.hidden = done;
    else if (!done) this.ensureStop();
    this.search = null;
    this.view.running(this, !/^output-/.test(state));
    if (this.view.filters) this.view.filters.check(this);
  }

  /** The running timer: how long the call has taken so far (feed.js ticks it). */
  tick(now) {
    this.durationEl.textContent = duration(now - this.at);
  }

  /** Stop, at the end of the header while the call runs or waits for a person. */
  ensureStop() {
    if (this.stopEl) return;
    this.stopEl = h('button', { type: 'button', class: 'stop', title: 'Stop this call', onclick: () => this.stop() }, 'Stop');
    this.headEnd.append(this.stopEl);
  }

  async stop() {
    if (this.stopEl) this.stopEl.disabled = true;
    try {
      await api(`/api/sessions/${this.view.id}/calls/${encodeURIComponent(this.callId)}/cancel`, { json: {} });
    } catch (err) {
      if (this.stopEl) this.stopEl.disabled = false;
      showError(this.suspensionEl, err);
    }
  }

  progress(done, total, message) {
    if (!this.progressEl) {
      this.progressEl = h('progress', { max: 1, value: 0 });
      this.progressText = h('span', { class: 'progress-text muted' });
      this.resultEl.before(h('div', { class: 'progress' }, this.progressEl, this.progressText,
        // Cancel where the progress is: the same as Stop in the header.
        h('button', { type: 'button', class: 'small', 'data-role': 'cancel-progress', onclick: () => this.stop() }, 'Cancel')));
    }
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
    this.footer();
    const approval = suspension.reason === 'approval';
    this.setState(approval ? 'approval-requested' : 'input-requested', approval ? 'needs approval' : 'needs an answer');
    const server = this.view.catalogue ? this.view.catalogue.serverOf(this.name) : null;
    // Who asks: the tool's MCP server for its questions, toolwire's policy for approvals.
    const asker = approval ? `${this.name} asks for your approval before it runs, with these arguments:`
      : server ? `The MCP server "${server.name}" asks:` : `${this.name} asks:`;
    const box = h('div', { class: 'ask', 'data-suspension-id': suspension.id, role: 'group', 'aria-label': approval ? 'Approval' : 'Question' },
      h('p', { class: 'asker' }, asker),
      approval ? h('pre', { tabindex: 0 }, pretty(this.input)) : null,
      h('p', { class: 'prompt' }, suspension.prompt || ''));
    const send = async (resolution) => {
      for (const b of box.querySelectorAll('button, input, select, textarea')) b.disabled = true;
      try {
        await api(`/api/sessions/${this.view.id}/suspensions/${suspension.id}`, { json: resolution });
        // The feed may have moved on before this answer came back: the result arrived,
        // or the call asked again (a form after its approval). Only while this question
        // is still the card's own does the answer set the state.
        if (this.suspension && this.suspension.id === suspension.id && /requested$/.test(this.el.dataset.state)) {
          this.setState('approval-responded', resolution.type === 'deny' ? 'denied, waiting' : 'answered, running');
        }
        box.remove();
      } catch (err) {
        for (const b of box.querySelectorAll('button, input, select, textarea')) b.disabled = false;
        showError(box, err);
      }
    };
    if (approval) {
      box.append(h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'approve', onclick: () => send({ type: 'approve' }) }, 'Approve'),
        h('button', { type: 'button', class: 'deny', onclick: () => send({ type: 'deny', reason: 'denied in the web app' }) }, 'Deny')));
    } else {
      const form = schemaForm(suspension.inputSchema, 'answer');
      form.el.addEventListener('submit', (e) => {
        e.preventDefault();
        const value = form.value();
        // Each field says what is wrong beside it (forms.js).
        if (value instanceof Error) return;
        send({ type: 'answer', value });
      });
      form.el.append(h('div', { class: 'actions' },
        h('button', { type: 'submit', class: 'answer' }, 'Answer'),
        h('button', { type: 'button', class: 'deny', onclick: () => send({ type: 'deny', reason: 'declined in the web app' }) }, 'Decline'),
        // MCP's third answer: the question is dismissed, not refused.
        h('button', { type: 'button', class: 'cancel', onclick: () => send({ type: 'cancel', reason: 'cancelled in the web app' }) }, 'Cancel')));
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
    // Live: the result came on the feed while the page was open, not from the stored
    // history of a load (an MCP App of a result from history calls nothing until used).
    this.live = !this.view.loading;
    if (result.status === 'suspended') {
      this.suspend(result.suspension);
      return;
    }
    this.suspensionEl.replaceChildren();
    this.el.dataset.hasResult = 'true';
    if (this.progressEl) this.progressEl.hidden = true;
    if (isCancelled(result)) this.setState('output-cancelled', 'cancelled');
    else this.setState(STATUS_STATE[result.status] || 'output-available', result.status);
    const ms = result.metadata && result.metadata.durationMs;
    this.durationEl.textContent = typeof ms === 'number' ? duration(ms) : '';
    this.durationEl.title = typeof ms === 'number' ? `${ms} ms running` : '';
    const waited = result.metadata && result.metadata.waitedMs;
    this.waitedEl.hidden = !(typeof waited === 'number' && waited > 0);
    this.waitedEl.textContent = this.waitedEl.hidden ? '' : `waited for you ${duration(waited)}`;
    this.waitedEl.title = this.waitedEl.hidden ? '' : 'Time spent waiting for a person (an approval or an answer), not counted in the duration';
    const child = result.metadata && result.metadata.childSessionId;
    this.linksEl.replaceChildren();
    if (typeof child === 'string' && ID.test(child)) {
      this.linksEl.append(h('a', { href: `/sessions/${child}`, class: 'child-session' }, 'open the subagent session'));
    }
    // Drawn when the card nears the viewport: a long session costs only what shows.
    this.drawn = false;
    this.view.whenVisible(this, () => this.draw());
    if (this.schemaEl) this.showSchema();
    if (this.detailEl && !this.detailEl.hidden) this.toggleDetail(this.detailEl.dataset.what, true);
    this.view.joinSeries(this);
  }

  draw() {
    if (this.drawn || !this.result) return;
    if (!this.timeEl.hasAttribute('datetime')) this.timeEl.setAttribute('datetime', isoOf(this.at));
    try {
      const size = JSON.stringify(this.result).length;
      this.sizeEl.textContent = bytes(size);
      this.sizeEl.title = `${size} bytes of stored JSON`;
    } catch { /* no size: nothing shown */ }
    // Folded (the compact view, fold all): the header is all that shows; the body is
    // drawn when the card is unfolded (setOpen), so scrolling folded cards stays cheap.
    if (this.body.hidden) return;
    this.drawn = true;
    this.footer();
    this.rawLink();
    this.showKinds();
    // A call an MCP App made returns its result to that app: drawing the app again here
    // would run a second view, whose own calls on load would each draw another (a chain).
    // Its card shows the app's fallback text instead.
    const byApp = (this.via && this.via.startsWith('app:'))
      || (this.view.appCalls && this.view.appCalls.has(this.callId));
    try {
      renderResult(this.resultEl, this.result, {
        resourceUrl,
        sandboxOrigin: this.view.info.sandboxOrigin,
        app: byApp ? null : this.view.appHost(this),
        // Resource links are read through the tool's own server (`resources/read`), and the
        // server keeps what was read with this result, so a reload shows it again.
        readResource: async (uri) => {
          const got = await api(`/api/tools/${encodeURIComponent(this.name)}/resource`,
            { json: { uri, keep: { sessionId: this.view.id, callId: this.callId } } });
          this.reads.set(uri, got);
          return got;
        },
        wasRead: (uri) => this.reads.get(uri),
      });
    } catch (err) {
      this.resultEl.replaceChildren();
      showError(this.resultEl, `cannot show this result: ${err.message}`);
    }
    // The call the person just made: drawn, it is taller; keep it in view, once.
    if (this.view.revealing === this.callId && !/^(input|approval)-/.test(this.el.dataset.state)) {
      this.view.revealing = null;
      this.view.bringIntoView(this);
    }
  }

  /** The kinds of the result as icons beside its status (named for assistive technology). */
  showKinds() {
    const kinds = [...new Set(this.kinds())].filter((k) => KIND_ICON[k]);
    if (this.kindsEl) this.kindsEl.remove();
    this.kindsEl = kinds.length ? h('span', { class: 'kinds', role: 'img', 'aria-label': `holds ${kinds.join(', ').replace(/_/g, ' ')}` },
      kinds.map((k) => h('span', { class: `i i-${KIND_ICON[k]}`, title: k.replace(/_/g, ' ') }))) : null;
    if (this.kindsEl) this.statusEl.after(this.kindsEl);
  }

  toggleDetail(what, keep) {
    for (const b of this.el.querySelectorAll('footer [data-show]:not([data-show="model"])')) b.setAttribute('aria-pressed', 'false');
    if (!this.detailEl) {
      this.detailEl = h('pre', { class: 'detail', hidden: true, tabindex: 0 });
      this.footer().after(this.detailEl);
    }
    if (!keep && !this.detailEl.hidden && this.detailEl.dataset.what === what) {
      this.detailEl.hidden = true;
      return;
    }
    const pressed = this.el.querySelector(`footer [data-show="${what}"]`);
    if (pressed) pressed.setAttribute('aria-pressed', 'true');
    const r = this.result || {};
    const value = what === 'json' ? r
      : what === 'diagnostics' ? (r.diagnostics || [])
        : ((r.metadata && r.metadata.mcp) || {});
    this.detailEl.dataset.what = what;
    this.detailEl.textContent = pretty(value);
    this.detailEl.hidden = false;
  }
}

/** Whether `result` is a cancelled call's: stored as an error whose code is `cancelled`
 * (a call stopped while it ran or waited, a question dismissed). */
export function isCancelled(result) {
  return !!result && result.status === 'error' && !!result.error && result.error.code === 'cancelled';
}

/** Whether the result's structured value matched the tool's outputSchema. The executor
 * checks it before storing: a mismatch is stored as an `invalid_output` error. */
function schemaCheck(result, tool) {
  if (!tool || !tool.outputSchema) return '';
  if (result.error && result.error.code === 'invalid_output') return `outputSchema: does not match (${result.error.message})`;
  return result.status === 'success' || result.status === 'partial' ? 'outputSchema: matched' : '';
}

/** A duration written for people: 420 ms, 8.0 s, 2 min 05 s, 1 h 02 min. */
export function duration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

function isoOf(ms) {
  try {
    return new Date(ms).toISOString();
  } catch {
    return '';
  }
}

/** One formatter for every card: making one per call is most of a card's cost. */
let timeFormat = null;

/** The time of day of a call (its `datetime` attribute has the full date). */
function clock(ms) {
  try {
    timeFormat = timeFormat || new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
    return timeFormat.format(ms);
  } catch {
    return '';
  }
}

/** A value's text for the clipboard: text, code and file contents as they are, the rest
 * as JSON. */
function textOf(v) {
  if (!v || typeof v !== 'object') return '';
  const d = v.data || {};
  if (typeof d.content === 'string') return d.content;
  if (typeof d.text === 'string') return d.text;
  if (v.kind === 'image' || v.kind === 'file') return '';
  return pretty(d);
}

/** Copying without the clipboard API (a page not on a secure origin). */
function copyByHand(text) {
  const area = h('textarea', { 'aria-hidden': 'true', class: 'visually-hidden' });
  area.value = text;
  document.body.append(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch { /* not allowed */ }
  area.remove();
  return ok;
}
