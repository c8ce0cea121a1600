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

export class SessionView {
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
      info.provider ? chatBox(this) : playground(this));
    await this.load();
    follow(this);
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
