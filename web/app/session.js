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
import { exportMenu } from './export.js';

/** The widget a kept resource read is stored as (the server's RESOURCE_READ_WIDGET). */
const RESOURCE_READ = 'toolwire.resource_read';

/** Timeline items per chunk. */
const CHUNK = 50;

/** Items drawn before the page laid itself out for the first time: what a 900-px window
 * shows of cards with a few lines of result (three read_file cards of ~250 px, the third
 * cut by the window's bottom). `fillFirst` then draws as many more as the layout says the
 * window still has room for (folded cards, a tall window): every card drawn beyond the
 * window is styled and laid out before the mark for nothing (5 here drew two cards below
 * the window, with their highlighted code and footers, before every first render). */
const FIRST_SCREEN = 3;

/** Items made before the page says it has rendered, when nothing needs the whole
 * timeline at once: a little more than the first screen (`fillFirst` makes more if a tall
 * window is still not full). The rest are made in idle slices (`buildRest`), so a
 * 10,000-call session does not build 10,000 cards before it shows the first ten; and
 * every item made before the mark is styled and laid out before it (undrawn, a header),
 * so making a whole chunk (50) first cost a 1,000-result session's first render ~40%
 * more, and 16 laid out a dozen headers below the window. */
const FIRST_BUILD = 8;

/** Milliseconds of one idle slice of building or drawing: well inside a 60 fps frame. */
const SLICE_MS = 8;

/** Runs `f` when the page is idle, or within 60 ms at the latest. */
const idle = window.requestIdleCallback ? (f) => requestIdleCallback(f, { timeout: 60 }) : (f) => setTimeout(f, 0);

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
    // The stored messages of the last load not made into items yet, from `restAt` on
    // (`buildRest`); `built` settles once every one is in the timeline.
    this.firstSeen = 0;
    this.rest = [];
    this.restAt = 0;
    // Indices of `rest` already made (a result given to its card early: `resultsAhead`).
    this.consumed = new Set();
    this.generation = 0;
    this.built = Promise.resolve();
    this.builtDone = () => {};
    this.itemCount = 0;
    // The timeline's items go into chunks of CHUNK (`.chunk`), and only chunks are
    // observed and skipped off screen (`content-visibility: auto`): a browser checks every
    // observed element and every such box each frame, so 10,000 cards observed one by one
    // cost ~100 ms a frame while scrolling; 200 chunks cost nothing noticeable.
    this.chunk = null;
    this.nearChunks = new Set();
    this.apps = [];
    /** Calls an MCP App of this page made, by call id, with the app's tool: their cards
     * show the result without drawing the app again (the app has it already). */
    this.appCalls = new Map();
    /** An MCP App's successful calls of one tool, by `app:APP` and tool (`joinSeries`). */
    this.series = new Map();
    // Link dialogs: whether one is open, and when each app's last one closed.
    this.linkDialogOpen = false;
    this.linkClosedAt = new Map();
    this.modelContext = new Map();
    // The call the person just made here (`reveal`): its card is brought into view when it
    // comes and again once its result is drawn; `note` says where it went when the filter
    // hides it.
    this.revealing = null;
    this.note = null;
    this.observer = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (e.isIntersecting) {
          this.nearChunks.add(e.target);
          this.drawChunk(e.target);
        } else {
          this.nearChunks.delete(e.target);
          // Once rendered, the first chunk may be skipped like the others, but only once
          // it is off screen (see `rendered`).
          if (this.wasRendered) e.target.classList.remove('first');
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
    const step = () => {
      const end = performance.now() + SLICE_MS;
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

  /** Draws, at once, the next `count` items of what the timeline shows first (from the
   * top, or from the bottom when newest come first, skipping what the filter hides): what
   * a person sees when the page opens is drawn before it says it has rendered; the rest
   * follows as it comes near. Remembers the last item it reached (`fillFirst`). */
  drawFirst(count = FIRST_SCREEN) {
    const newest = this.timeline.dataset.order === 'newest';
    const chunks = [...this.timeline.children];
    if (newest) chunks.reverse();
    let shown = 0;
    // Items from the top to the last one reached, drawn or not (`fillFirst`'s estimate).
    this.firstSeen = 0;
    for (const chunk of chunks) {
      if (chunk.hidden) continue;
      const items = [...chunk.children];
      if (newest) items.reverse();
      for (const el of items) {
        if (el.hidden) continue;
        this.lastFirst = el;
        this.firstSeen += 1;
        if (!this.pendingDraw.has(el)) continue;
        this.drawNow(el);
        shown += 1;
        if (shown >= count) return;
      }
    }
  }

  /** Draws more of the first screen while what was drawn ends above the window's bottom
   * (a tall window, narrow cards), reading the layout once per round: the page lays out
   * what it shows before it says it has rendered anyway. */
  fillFirst() {
    for (let round = 0; round < 8; round += 1) {
      const last = this.lastFirst;
      if (!last || !last.isConnected) return;
      const bottom = last.getBoundingClientRect().bottom;
      if (bottom >= innerHeight) return;
      // As many more as the room left holds at the items' mean height so far (one layout
      // read, the same one), and one more.
      const top = this.timeline.getBoundingClientRect().top;
      const each = Math.max(24, (bottom - top) / Math.max(1, this.firstSeen));
      const count = Math.min(4 * FIRST_SCREEN, Math.ceil((innerHeight - bottom) / each) + 1);
      const before = this.pendingDraw.size;
      const made = this.itemCount;
      // What is made is drawn up to here: make the next few first.
      if (this.building && last === this.timeline.querySelector(':scope > .chunk:last-child > :last-child')) {
        this.buildFirst(this.itemCount + Math.max(count, FIRST_BUILD));
      }
      this.drawFirst(count);
      if (this.pendingDraw.size === before && this.itemCount === made) return;
    }
  }

  /** Once the page has rendered: the first chunk may be skipped off screen like the
   * others (its size is remembered now), from when it is off screen. Turned
   * `content-visibility: auto` while on screen, it would count as skipped until
   * Chromium's next rendering update judged it near: its text read as not rendered
   * (`innerText` ""), which failed tests reading a card right after load. */
  rendered() {
    this.wasRendered = true;
    idle(() => {
      for (const c of this.timeline.querySelectorAll(':scope > .chunk.first')) {
        if (!this.nearChunks.has(c)) c.classList.remove('first');
      }
    });
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
      // The first chunk of the page's first load is laid out whole until the page has
      // rendered and it is off screen (`rendered`).
      const first = !this.wasRendered && !this.timeline.querySelector(':scope > .chunk');
      this.chunk = h('div', { class: first ? 'chunk first' : 'chunk' });
      this.timeline.append(this.chunk);
      this.observer.observe(this.chunk);
    }
    this.chunk.append(el);
    this.itemCount += 1;
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

  /** `ready`: the catalogue's first load (started by the entry beside the sidebar).
   * Settles once what shows first is drawn (`fillFirst` then tops it up to the window's
   * height); the rest of the timeline is made in idle slices after, and `built` settles
   * once it is all there. */
  async start(ready) {
    // The session is fetched at once, beside what the view needs first.
    this.first = api(`/api/sessions/${this.id}`);
    this.first.catch(() => {});
    const [info] = await Promise.all([api('/api/info'), ready]);
    this.info = info;
    this.filters = new Filters(this);
    this.composer = info.provider ? chatBox(this) : playground(this);
    const exported = exportMenu(this);
    this.main.replaceChildren(
      h('div', { class: 'session-head' },
        h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '/' }, 'Sessions'), ' / ', h('span', { class: 'muted sid' })),
        h('div', { class: 'title-row' }, h('h1', { class: 'title' }), this.filters.shown, exported.button, exported.list)),
      this.filters.el,
      this.timeline,
      this.composer);
    initKeys(this);
    const { rest } = await this.load(true);
    // The page's first screen is drawn; the pending calls' controls and the live feed
    // follow (`settled`, which the page awaits after its first-render mark).
    this.settled = rest.then(() => follow(this));
  }

  /** Draws the timeline from the stored messages; `first`, the page's first load: the
   * composer opens or not, the filter's choices are made and the first screen is drawn
   * before the suspensions' answer is awaited (no frame shows the cards undrawn), and
   * the page's load returns then, with `rest`: the suspensions drawn and the rest of the
   * timeline started. A later load returns once `rest` is done. */
  async load(first) {
    const early = this.first;
    this.first = null;
    const { session, messages, lastEventSeq } = await (early || api(`/api/sessions/${this.id}`));
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
    this.series.clear();
    for (const c of [...this.runningCards]) this.running(c, false);
    this.observer.disconnect();
    this.pendingDraw.clear();
    this.drawQueue.clear();
    this.nearChunks.clear();
    this.chunk = null;
    this.streaming = null;
    this.timeline.replaceChildren();
    // A load before this one that was still making its items stops (and says it is over).
    this.builtDone();
    this.generation += 1;
    let done;
    this.built = new Promise((resolve) => { done = resolve; });
    this.builtDone = done;
    this.rest = Array.isArray(messages) ? messages : [];
    this.restAt = 0;
    this.consumed = new Set();
    // The first screen's items now, the rest in idle slices (`buildRest`): unless what
    // shows first needs them all (newest first, or a filter that may match anything).
    const whole = this.filters && (this.filters.active() || this.filters.state.order === 'newest');
    this.itemCount = 0;
    this.buildFirst(whole ? Infinity : FIRST_BUILD);
    if (!this.rest.length) done();
    // Calls still running once the stored messages are drawn get their Stop.
    for (const c of this.runningCards) c.ensureStop();
    if (first) {
      if (this.composerStart) this.composerStart(this.cards.size > 0 || this.building);
      this.filters.refresh();
      this.drawFirst();
    }
    const rest = this.suspended(suspensions, lastEventSeq);
    if (!first) await rest;
    return { rest };
  }

  /** The end of a load: pending calls whose result is not stored yet (e.g. waiting for
   * approval after a restart) get their controls (their cards may be among those not
   * made yet), then the rest of the timeline is made in idle slices. */
  async suspended(suspensions, lastEventSeq) {
    const pending = await suspensions;
    if (pending.length) this.flush();
    for (const p of pending) {
      const card = this.card(p.call.id, p.call.name, p.call.input);
      card.suspend(p.suspension);
    }
    this.after = Math.max(this.after, lastEventSeq || 0);
    // Only now: the suspensions' answer is not kept waiting behind slices of building.
    this.buildRest();
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
      const app = this.appCalls.get(callId);
      if (app) card.madeBy(`app:${app}`);
      this.append(card.el);
      if (this.filters) this.filters.added(card);
      if (this.revealing === callId) this.bringIntoView(card);
    }
    return card;
  }

  /** The session's counts changed (a call came, asked, was answered or ended): whoever
   * shows them (the sidebar, `onCounts`) reads them again, once for a burst of events. */
  countsChanged() {
    if (!this.onCounts || this.countsTimer) return;
    this.countsTimer = setTimeout(() => {
      this.countsTimer = null;
      this.onCounts();
    }, 300);
  }

  /** The person made call `callId` here (the composer, Re-run): its card is brought into
   * view when it is there, and again once its result is drawn (`Card.draw`). */
  reveal(callId) {
    this.revealing = callId;
    const card = this.cards.get(callId);
    if (card) this.bringIntoView(card);
  }

  /** Scrolls the page the least that shows `card` whole between the sticky filter bar
   * and the sticky composer (its top there when it is taller than the room): the
   * browser's scrollIntoView knows neither, and left a new card under the call form.
   * A card the filter hides gets a line above the composer saying so, with a way to
   * show it. */
  bringIntoView(card) {
    if (card.el.hidden) {
      this.hiddenNote(card);
      return;
    }
    this.clearNote();
    // Under the top bar and the filter bar (which scrolls away on a narrow screen).
    const bar = document.querySelector('header.top');
    const top = Math.max(bar ? bar.getBoundingClientRect().bottom : 0, this.filters ? this.filters.el.getBoundingClientRect().bottom : 0);
    const bottom = this.composer ? this.composer.getBoundingClientRect().top : innerHeight;
    const r = card.el.getBoundingClientRect();
    const gap = 8;
    let dy = 0;
    if (r.top < top + gap || r.height > bottom - top - 2 * gap) dy = r.top - top - gap;
    else if (r.bottom > bottom - gap) dy = r.bottom - bottom + gap;
    if (dy) window.scrollBy({ top: dy, behavior: 'instant' });
  }

  /** The line that says the filter hides the call just made, with Show it (which clears
   * the filter and brings the card into view). */
  hiddenNote(card) {
    if (!this.note) this.note = h('p', { class: 'reveal-note', role: 'status' });
    this.note.noteCard = card;
    this.note.replaceChildren(`Your call to ${card.name} is hidden by the filter.`,
      h('button', { type: 'button', class: 'small', 'data-role': 'show-call', onclick: () => {
        this.filters.clear();
        this.bringIntoView(card);
        card.el.focus({ preventScroll: true });
      } }, 'Show it'));
    if (this.composer && this.note.parentElement !== this.composer) this.composer.prepend(this.note);
  }

  clearNote() {
    if (this.note) this.note.remove();
  }

  /** After the filter changed: the line about a hidden call goes once the call shows. */
  filterApplied() {
    if (this.note && this.note.isConnected && this.note.noteCard && !this.note.noteCard.el.hidden) this.clearNote();
  }

  /** Every card in timeline order, including those whose call id was reused (the
   * stored messages not made into cards yet are made first). */
  allCards() {
    this.flush();
    return this.builtCards();
  }

  /** Every message and card in timeline order (made first, as `allCards`). */
  items() {
    this.flush();
    return this.builtItems();
  }

  /** The cards made so far, in timeline order. */
  builtCards() {
    return [...this.timeline.querySelectorAll(':scope > .chunk > .card')];
  }

  /** The messages and cards made so far, in timeline order. */
  builtItems() {
    return [...this.timeline.querySelectorAll(':scope > .chunk > *')];
  }

  /** Whether stored messages of the last load still wait to be made into items. */
  get building() {
    return this.restAt < this.rest.length;
  }

  /** Makes the waiting stored messages into items, in order, until the time `until` or
   * until the timeline holds `most` items. */
  buildSome(until = Infinity, most = Infinity) {
    const rest = this.rest;
    this.loading = true;
    try {
      while (this.restAt < rest.length && this.itemCount < most) {
        // Counted before it is made: a message that throws is not made again.
        const m = rest[this.restAt];
        this.restAt += 1;
        if (!this.consumed.has(this.restAt - 1)) this.message(m);
        if ((this.restAt & 15) === 0 && performance.now() > until) break;
      }
    } finally {
      this.loading = false;
    }
    if (this.restAt >= rest.length && rest.length) {
      this.rest = [];
      this.restAt = 0;
      this.consumed.clear();
      // Calls still running once the stored messages are made get their Stop.
      for (const c of this.runningCards) c.ensureStop();
      this.builtDone();
    }
  }

  /** Makes the stored messages into items until the timeline holds `most`, and gives
   * those cards their results stored further on (`resultsAhead`). */
  buildFirst(most) {
    this.buildSome(Infinity, most);
    if (this.building) this.resultsAhead();
  }

  /** Gives the cards made so far whose result is stored further on (calls made at once
   * have their results after all of them) that result now, so what shows first shows
   * how each call ended, not a running card; the messages used are not made again
   * (`consumed`). A scan of the messages not made yet, no element made for them. */
  resultsAhead() {
    const waiting = new Set();
    for (const [id, card] of this.cards) if (!card.result) waiting.add(id);
    if (!waiting.size) return;
    this.loading = true;
    try {
      for (let i = this.restAt; i < this.rest.length && waiting.size; i += 1) {
        const m = this.rest[i];
        const id = m && m.role === 'tool_result' && m.content ? m.content.callId : null;
        if (id && waiting.has(id) && !this.consumed.has(i)) {
          waiting.delete(id);
          this.consumed.add(i);
          this.message(m);
        }
      }
    } finally {
      this.loading = false;
    }
  }

  /** Makes every stored message not made yet into items, now: for what needs the whole
   * timeline (the filter, fold all, the keyboard, the feed's events, a call's result). */
  flush() {
    if (!this.building) return;
    this.buildSome();
    // The choices and the count, from every card (the filter held them while building).
    if (this.filters) this.filters.later();
  }

  /** Makes the rest of the stored messages into items in idle slices, between frames and
   * input, then redraws the filter's choices and count from every card. */
  buildRest() {
    const generation = this.generation;
    const step = () => {
      if (generation !== this.generation || !this.building) return;
      this.buildSome(performance.now() + SLICE_MS);
      if (this.building) idle(step);
      else if (this.filters) this.filters.refresh();
    };
    if (this.building) idle(step);
  }

  /** How many cards the stored messages not made yet will add: `message` and `card`'s
   * rules (a call's first mention makes its card; a second result for a call makes
   * another), without making anything. The count of calls says it while they are made. */
  unbuiltCards() {
    const seen = new Map();
    const hasResult = (id) => (seen.has(id) ? seen.get(id) : this.cards.has(id) ? !!this.cards.get(id).result : undefined);
    let n = 0;
    for (let i = this.restAt; i < this.rest.length; i += 1) {
      if (this.consumed.has(i)) continue;
      const m = this.rest[i];
      const c = (m && m.content) || {};
      if (m.role === 'assistant') {
        for (const call of c.toolCalls || []) {
          if (hasResult(call.id) === undefined) {
            seen.set(call.id, false);
            n += 1;
          }
        }
      } else if (m.role === 'tool_result') {
        if (hasResult(c.callId) !== false) n += 1;
        seen.set(c.callId, true);
      }
    }
    return n;
  }

  widget(widget) {
    if (!widget) return;
    this.append(h('div', { class: 'msg widget' }, renderWidget(widget, { resourceUrl })));
  }

  /** What an MCP App in `card` may ask of the page (apphost.js). */
  appHost(card) {
    return appHost(this, card);
  }

  /** Folds an MCP App's successful calls of one tool into the newest one's card: a
   * monitor app that polls its server every 2 s made a card every 2 s (an hour: 1,800
   * cards, the page growing as the app ran). The earlier cards stay in the timeline,
   * hidden (search, the stored JSON and the app's own look-ups still find them); the
   * newest says how many fold into it and shows them on request. A failed call is not
   * folded: it stays in view as any error does. Called when a card learns who made it
   * (`madeBy`) and when its result comes, whichever is last. */
  joinSeries(card) {
    if (!card.via || !card.via.startsWith('app:') || !card.result || card.result.status !== 'success') return;
    const key = `${card.via}\n${card.name}`;
    const series = this.series.get(key);
    if (!series) {
      card.series = { latest: card, earlier: [], open: false };
      this.series.set(key, card.series);
      return;
    }
    if (card.series === series) return;
    card.series = series;
    const before = series.latest;
    // Results may come out of order (two calls at once): the later card in the timeline
    // is the one that shows.
    let older = card;
    if (before.el.compareDocumentPosition(card.el) & Node.DOCUMENT_POSITION_FOLLOWING) {
      older = before;
      series.latest = card;
      card.adoptSeriesNote(before);
    }
    series.earlier.push(older);
    if (older.folded()) older.el.hidden = true;
    series.latest.seriesNote(series);
    if (this.filters) this.filters.later();
  }

  /** Shows the earlier calls of `series` or folds them again. */
  toggleSeries(series) {
    if (!series) return;
    series.open = !series.open;
    for (const c of series.earlier) c.el.hidden = c.folded();
    series.latest.seriesNote(series);
    // The filter has the last word on what it hides; shown cards near the viewport draw.
    if (this.filters) this.filters.apply();
    // Each chunk once: a long series has dozens of cards in a chunk, and drawChunk walks
    // the whole chunk.
    const chunks = new Set(series.earlier.filter((c) => !c.el.hidden).map((c) => c.el.parentElement));
    for (const chunk of chunks) if (chunk && this.nearChunks.has(chunk)) this.drawChunk(chunk);
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
    this.flush();
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
