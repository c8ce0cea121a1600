// A session at `/sessions/{id}`: the timeline of its messages and tool call cards, drawn
// from the stored messages and then kept live by the event feed (feed.js). Everything a
// tool, a model or a server sent is put in the page as text or through the renderer,
// never as markup.

import { renderWidget } from '../toolwire-render.js';
import { api, resourceUrl } from './api.js';
import { h } from './util.js';
import { Card } from './card.js';
import { follow } from './feed.js';
import { appHost } from './apphost.js';
import { chatBox, playground } from './composer.js';
import { Filters } from './filters.js';
import { initKeys } from './keys.js';

/** The widget a kept resource read is stored as (the server's RESOURCE_READ_WIDGET). */
const RESOURCE_READ = 'toolwire.resource_read';

/** Timeline items per chunk. */
const CHUNK = 50;

/** Items drawn before the page says it is ready: more than a tall window shows. */
const FIRST_SCREEN = 10;

export class SessionView {
  /** `catalogue`: the tools and servers (tools.js), shared with the sidebar. */
  constructor(main, id, catalogue) {
    this.main = main;
    this.id = id;
    this.catalogue = catalogue;
    this.cards = new Map();
    this.tools = catalogue.tools;
    this.timeline = h('div', { class: 'timeline', id: 'timeline', 'aria-label': 'Timeline' });
    // Cards whose call runs: their timers tick once a second, and only theirs.
    this.runningCards = new Set();
    this.ticker = null;
    this.streaming = null;
    this.source = null;
    this.after = 0;
    this.pendingDraw = new Map();
    // Cards near the viewport waiting their turn to be drawn (pump), in timeline order.
    this.drawQueue = new Set();
    this.pumping = false;
    this.waiters = new Map();
    // The timeline's items go into chunks of CHUNK (`.chunk`), and only chunks are
    // observed and skipped off screen (`content-visibility: auto`): a browser checks every
    // observed element and every such box each frame, so 10,000 cards observed one by one
    // cost ~100 ms a frame while scrolling; 200 chunks cost nothing noticeable.
    this.chunk = null;
    this.nearChunks = new Set();
    this.apps = [];
    // Link dialogs: whether one is open, and when each app's last one closed.
    this.linkDialogOpen = false;
    this.linkClosedAt = new Map();
    this.modelContext = new Map();
    this.observer = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (e.isIntersecting) {
          this.nearChunks.add(e.target);
          this.drawChunk(e.target);
        } else {
          this.nearChunks.delete(e.target);
        }
      }
    }, { rootMargin: '2000px 0px' });
  }

  /** Queues the pending cards of a chunk near the viewport to be drawn. */
  drawChunk(chunk) {
    for (const el of chunk.children) if (this.pendingDraw.has(el)) this.drawQueue.add(el);
    this.pump();
  }

  /** Draws queued cards a few milliseconds at a time, between frames and input: a chunk
   * of 50 results with highlighted code would otherwise hold the page for one long task.
   * What shows first was drawn before this (`drawFirst`). */
  pump() {
    if (this.pumping || !this.drawQueue.size) return;
    this.pumping = true;
    const idle = window.requestIdleCallback ? (f) => requestIdleCallback(f, { timeout: 60 }) : (f) => setTimeout(f, 0);
    const step = () => {
      const end = performance.now() + 8;
      for (const el of this.drawQueue) {
        this.drawQueue.delete(el);
        this.drawNow(el);
        if (performance.now() > end) break;
      }
      if (this.drawQueue.size) idle(step);
      else this.pumping = false;
    };
    idle(step);
  }

  /** Draws the card `el` if it waits to be. */
  drawNow(el) {
    const draw = this.pendingDraw.get(el);
    if (!draw) return;
    this.pendingDraw.delete(el);
    draw();
  }

  /** Draws, at once, the first screenful of what the timeline shows first (the top of
   * the first chunk, or of the last when newest come first): what a person sees when the
   * page opens is drawn before it says it is ready; the rest follows as it comes near. */
  drawFirst() {
    const t = this.timeline;
    const chunk = t.dataset.order === 'newest' ? t.lastElementChild : t.firstElementChild;
    if (!chunk) return;
    const items = [...chunk.children];
    if (t.dataset.order === 'newest') items.reverse();
    let shown = 0;
    for (const el of items) {
      if (el.hidden) continue;
      this.drawNow(el);
      shown += 1;
      if (shown >= FIRST_SCREEN) break;
    }
  }

  /** Runs `draw` once `card` is within two thousand pixels of the viewport (its chunk is):
   * soon when it is already there. */
  whenVisible(card, draw) {
    this.pendingDraw.set(card.el, draw);
    const chunk = card.el.parentElement;
    if (chunk && this.nearChunks.has(chunk)) {
      this.drawQueue.add(card.el);
      this.pump();
    }
  }

  /** Appends a message, a card or a widget to the timeline, in its last chunk. */
  append(el) {
    if (!this.chunk || this.chunk.childElementCount >= CHUNK) {
      this.chunk = h('div', { class: 'chunk' });
      this.timeline.append(this.chunk);
      this.observer.observe(this.chunk);
    }
    this.chunk.append(el);
  }

  /** Starts or stops the running timer of `card`. */
  running(card, on) {
    if (on) this.runningCards.add(card);
    else this.runningCards.delete(card);
    if (this.runningCards.size && !this.ticker) {
      // The interval stops itself once nothing runs: cards made and finished in one go
      // (a load) start and stop nothing.
      this.ticker = setInterval(() => {
        if (!this.runningCards.size) {
          clearInterval(this.ticker);
          this.ticker = null;
          return;
        }
        const now = Date.now();
        for (const c of this.runningCards) c.tick(now);
      }, 1000);
    }
  }

  /** `ready`: the catalogue's first load (started by the entry beside the sidebar). */
  async start(ready) {
    // The session is fetched at once, beside what the view needs first.
    this.first = api(`/api/sessions/${this.id}`);
    this.first.catch(() => {});
    const [info] = await Promise.all([api('/api/info'), ready]);
    this.info = info;
    this.filters = new Filters(this);
    this.composer = info.provider ? chatBox(this) : playground(this);
    this.main.replaceChildren(
      h('div', { class: 'session-head' },
        h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '/' }, 'Sessions'), ' / ', h('span', { class: 'muted sid' })),
        h('div', { class: 'title-row' }, h('h1', { class: 'title' }), this.filters.shown)),
      this.filters.el,
      this.timeline,
      this.composer);
    initKeys(this);
    await this.load();
    if (this.composerStart) this.composerStart(this.cards.size > 0);
    this.filters.refresh();
    this.drawFirst();
    follow(this);
  }

  /** Draws the timeline from the stored messages. */
  async load() {
    const first = this.first;
    this.first = null;
    const { session, messages, lastEventSeq } = await (first || api(`/api/sessions/${this.id}`));
    // Asked now, drawn after the messages: its answer comes while they are built. (Asked
    // after the session was read, so a call it lists is never older than the session.)
    const suspensions = api(`/api/sessions/${this.id}/suspensions`);
    suspensions.catch(() => {});
    document.title = `${session.title || session.id} · toolwire`;
    this.main.querySelector('.title').textContent = session.title || 'Untitled session';
    this.main.querySelector('.sid').textContent = session.id;
    document.getElementById('where').textContent = session.title || session.id;
    const apps = this.apps.splice(0);
    await Promise.all(apps.map((a) => a.teardown('redrawn')));
    this.cards.clear();
    for (const c of [...this.runningCards]) this.running(c, false);
    this.observer.disconnect();
    this.pendingDraw.clear();
    this.drawQueue.clear();
    this.nearChunks.clear();
    this.chunk = null;
    this.streaming = null;
    this.timeline.replaceChildren();
    this.loading = true;
    try {
      for (const m of messages) this.message(m);
    } finally {
      this.loading = false;
    }
    // Calls still running once the stored messages are drawn get their Stop.
    for (const c of this.runningCards) c.ensureStop();
    // Pending calls whose result is not stored yet (e.g. waiting for approval after a
    // restart) still get their controls.
    const pending = await suspensions;
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
      this.append(h('div', { class: 'msg user' }, c.text || ''));
    } else if (m.role === 'assistant') {
      if (c.text) this.append(h('div', { class: 'msg assistant' }, c.text));
      for (const call of c.toolCalls || []) {
        const card = this.card(call.id, call.name, call.input, m.createdAtMs);
        if (call.byPerson) card.madeBy(call.byPerson.via);
      }
    } else if (m.role === 'tool_result') {
      // A stored result for a call that already has one (a reused id: a hostile model or
      // tool) gets its own card; nothing stored is hidden.
      const had = this.cards.get(c.callId);
      if (had && had.result) this.cards.delete(c.callId);
      this.card(c.callId, c.toolName, had && had.result ? had.input : undefined, startOf(c, m.createdAtMs)).setResult(c);
      this.settle(c);
    } else if (m.role === 'widget') {
      // A resource read kept with its call's result is drawn in that result's link, and
      // only there: a read of a URI the result does not link stays a widget of its own.
      const w = c.widget;
      const card = w && w.widget === RESOURCE_READ && this.cards.get(c.callId);
      if (card && w.data && linksTo(card.result, w.data.uri)) card.reads.set(w.data.uri, w.data.read);
      else this.widget(w);
    }
  }

  card(callId, name, input, at) {
    let card = this.cards.get(callId);
    if (!card) {
      card = new Card(this, callId, name || 'tool', input === undefined ? {} : input, at);
      this.cards.set(callId, card);
      this.append(card.el);
      if (this.filters) this.filters.added(card);
    }
    return card;
  }

  /** Every card in timeline order, including those whose call id was reused. */
  allCards() {
    return [...this.timeline.querySelectorAll(':scope > .chunk > .card')];
  }

  /** Every message and card in timeline order. */
  items() {
    return [...this.timeline.querySelectorAll(':scope > .chunk > *')];
  }

  widget(widget) {
    if (!widget) return;
    this.append(h('div', { class: 'msg widget' }, renderWidget(widget, { resourceUrl })));
  }

  /** What an MCP App in `card` may ask of the page (apphost.js). */
  appHost(card) {
    return appHost(this, card);
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
}

/** Whether `result` has a resource link to `uri`. */
function linksTo(result, uri) {
  const out = result && Array.isArray(result.output) ? result.output : [];
  return typeof uri === 'string' && out.some((v) => v && v.kind === 'resource_link' && v.data && v.data.uri === uri);
}

/** When a stored result's call started: its metadata's `startedAt`, else when it was stored. */
function startOf(result, storedAt) {
  const t = result && result.metadata && Date.parse(result.metadata.startedAt);
  return Number.isFinite(t) ? t : storedAt;
}
