// The filter bar of a session: text, tool, server, status and kind filters, newest or
// oldest first, compact view, fold and unfold all, jump to the next error. The filter
// lives in the URL's query (`?q=&tool=&server=&status=&kind=&order=&view=`), so a
// filtered view can be shared and survives a reload.

import { h } from './util.js';

const STATUS = [
  ['', 'Any status'],
  ['errors', 'Errors'],
  ['waiting', 'Waiting for you'],
  ['running', 'Running'],
  ['done', 'Succeeded'],
  ['cancelled', 'Cancelled'],
];
const KEYS = ['q', 'tool', 'server', 'status', 'kind', 'order', 'view'];
const ERROR_STATES = new Set(['output-error', 'output-denied']);

function matchesStatus(state, status) {
  switch (status) {
    case 'errors': return ERROR_STATES.has(state);
    case 'waiting': return state === 'approval-requested' || state === 'input-requested';
    case 'running': return state === 'input-available' || state === 'approval-responded';
    case 'done': return state === 'output-available';
    case 'cancelled': return state === 'output-cancelled';
    default: return true;
  }
}

export class Filters {
  constructor(view) {
    this.view = view;
    const params = new URLSearchParams(location.search);
    this.state = Object.fromEntries(KEYS.map((k) => [k, params.get(k) || '']));
    this.q = h('input', { type: 'search', name: 'q', placeholder: 'Filter calls…  /', 'aria-label': 'Filter calls by text', value: this.state.q });
    this.tool = h('select', { name: 'tool', 'aria-label': 'Filter by tool' });
    this.server = h('select', { name: 'server', 'aria-label': 'Filter by server', hidden: true });
    this.status = h('select', { name: 'status', 'aria-label': 'Filter by status' },
      STATUS.map(([v, l]) => h('option', { value: v }, l)));
    this.kind = h('select', { name: 'kind', 'aria-label': 'Filter by kind of result' });
    this.status.value = this.state.status;
    this.orderEl = h('button', { type: 'button', class: 'small', 'data-role': 'order', onclick: () => this.set('order', this.state.order === 'newest' ? '' : 'newest') });
    this.compactEl = h('button', { type: 'button', class: 'small', 'data-role': 'compact', 'aria-pressed': 'false', title: 'One line per call', onclick: () => this.set('view', this.state.view === 'compact' ? '' : 'compact') }, label('Compact'));
    this.foldEl = h('button', { type: 'button', class: 'small', 'data-role': 'fold-all', title: 'Fold or unfold every card', onclick: () => this.foldAll() }, label('Fold all'));
    this.nextErrorEl = h('button', { type: 'button', class: 'small', 'data-role': 'next-error', title: 'Jump to the next error (e)', onclick: () => this.nextError() }, label('Next error'));
    this.shown = h('span', { class: 'shown', role: 'status' });
    this.el = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter the timeline' },
      this.q, this.tool, this.server, this.status, this.kind,
      this.orderEl, this.compactEl, this.foldEl, this.nextErrorEl);
    this.el.addEventListener('submit', (e) => e.preventDefault());
    let typing = null;
    this.q.addEventListener('input', () => {
      clearTimeout(typing);
      typing = setTimeout(() => this.set('q', this.q.value), 150);
    });
    for (const [key, select] of [['tool', this.tool], ['server', this.server], ['status', this.status], ['kind', this.kind]]) {
      select.addEventListener('change', () => this.set(key, select.value));
    }
    this.folded = false;
    this.refreshTimer = null;
    view.catalogue.onChange(() => this.refresh());
  }

  /** Clears what narrows the timeline (text, tool, server, status, kind), in the URL too. */
  clear() {
    for (const key of ['q', 'tool', 'server', 'status', 'kind']) this.state[key] = '';
    this.q.value = '';
    this.status.value = '';
    const params = new URLSearchParams(location.search);
    for (const key of ['q', 'tool', 'server', 'status', 'kind']) params.delete(key);
    const query = params.toString();
    history.replaceState(history.state, '', `${location.pathname}${query ? `?${query}` : ''}${location.hash}`);
    this.refresh();
  }

  active() {
    const s = this.state;
    return !!(s.q || s.tool || s.server || s.status || s.kind);
  }

  set(key, value) {
    this.state[key] = value;
    const params = new URLSearchParams(location.search);
    if (value) params.set(key, value);
    else params.delete(key);
    const query = params.toString();
    history.replaceState(history.state, '', `${location.pathname}${query ? `?${query}` : ''}${location.hash}`);
    this.apply();
  }

  /** Whether `card` passes the filter. */
  matches(card) {
    const s = this.state;
    if (s.tool && card.name !== s.tool) return false;
    if (s.server) {
      const server = this.view.catalogue.serverOf(card.name);
      if ((server ? server.name : 'builtin') !== s.server) return false;
    }
    if (s.status && !matchesStatus(card.el.dataset.state, s.status)) return false;
    if (s.kind && !card.kinds().includes(s.kind)) return false;
    if (s.q && !card.searchText().includes(s.q.toLowerCase())) return false;
    return true;
  }

  /** A card that just came (from the feed or the load): shown or hidden as the filter says. */
  added(card) {
    if (this.active()) card.el.hidden = card.folded() || !this.matches(card);
    if (this.state.view === 'compact' || this.folded) card.setOpen(false);
    this.later();
  }

  /** A card whose state or result changed. */
  check(card) {
    if (this.active()) card.el.hidden = card.folded() || !this.matches(card);
    this.later();
  }

  /** The choices (tools, kinds) and the count, redrawn at most every 300 ms. */
  later() {
    // (While a long session's cards are made, the view refreshes once they all are.)
    if (this.refreshTimer || this.view.building) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      this.refresh();
    }, 300);
  }

  /** Redraws the choices from the cards there are, then applies the filter. */
  refresh() {
    // The cards made so far: while a long session is made, the choices grow as it does
    // (the view refreshes again once every card is made).
    const cards = this.view.builtCards().map((el) => this.cardOf(el)).filter(Boolean);
    const tools = [...new Set(cards.map((c) => c.name))].sort();
    const kinds = [...new Set(cards.flatMap((c) => c.kinds()))].sort();
    fill(this.tool, 'All tools', tools, this.state.tool);
    fill(this.kind, 'All kinds', kinds, this.state.kind);
    const servers = this.view.catalogue.servers.map((s) => s.name);
    this.server.hidden = !servers.length;
    fill(this.server, 'All servers', ['builtin', ...servers], this.state.server, { builtin: 'Built-in tools' });
    this.apply();
  }

  cardOf(el) {
    return el.toolwireCard || null;
  }

  apply() {
    const s = this.state;
    const t = this.view.timeline;
    t.dataset.order = s.order === 'newest' ? 'newest' : 'oldest';
    t.classList.toggle('compact', s.view === 'compact');
    this.orderEl.replaceChildren(label(s.order === 'newest' ? 'Newest first' : 'Oldest first'));
    this.orderEl.title = 'Change the order of the timeline';
    this.compactEl.setAttribute('aria-pressed', String(s.view === 'compact'));
    const active = this.active();
    let total = 0;
    let shown = 0;
    // A filter needs every card; with none, the cards not made yet (a long session's,
    // made in idle slices) show as they are made, and are only counted here.
    const items = active ? this.view.items() : this.view.builtItems();
    if (!active && this.view.building) {
      total = this.view.unbuiltCards();
      shown = total;
    }
    for (const el of items) {
      if (el.classList.contains('card')) {
        const card = this.cardOf(el);
        total += 1;
        // An earlier call of a folded series stays hidden (session.js `joinSeries`).
        el.hidden = Boolean(card) && (card.folded() || (active && !this.matches(card)));
        if (!el.hidden) shown += 1;
        if (card && s.view === 'compact' && !this.compactApplied) card.setOpen(false);
        if (card && s.view !== 'compact' && this.compactApplied && !this.folded) card.setOpen(true);
      } else if (el.classList.contains('msg')) {
        // Messages show with a text filter that they match, and without any filter.
        const onlyText = s.q && !(s.tool || s.server || s.status || s.kind);
        el.hidden = active && !(onlyText && el.textContent.toLowerCase().includes(s.q.toLowerCase()));
      }
    }
    // A chunk with nothing shown takes no room; the others' size is guessed from what they
    // show, for those not drawn since (a filter that shows 3 calls in 10,000 must not
    // leave 200 chunks' worth of blank page).
    const per = s.view === 'compact' ? 40 : 130;
    for (const chunk of t.children) {
      let visible = 0;
      for (const el of chunk.children) if (!el.hidden) visible += 1;
      chunk.hidden = visible === 0;
      chunk.style.containIntrinsicSize = `auto ${Math.max(visible, 1) * per}px`;
    }
    this.compactApplied = s.view === 'compact';
    this.shown.textContent = active ? `${shown} of ${total} calls` : `${total} call${total === 1 ? '' : 's'}`;
    // (While cards are still made, an error may be among them: the button looks there.)
    this.nextErrorEl.disabled = !this.view.building && !t.querySelector(':scope > .chunk > .card:is([data-state="output-error"], [data-state="output-denied"])');
    if (this.view.filterApplied) this.view.filterApplied();
  }

  foldAll() {
    this.folded = !this.folded;
    for (const el of this.view.allCards()) {
      const card = this.cardOf(el);
      if (card) card.setOpen(!this.folded);
    }
    this.foldEl.replaceChildren(label(this.folded ? 'Unfold all' : 'Fold all'));
    this.foldEl.dataset.folded = String(this.folded);
  }

  /** Moves to the next shown card in reading order after `from` (or the viewport's top);
   * `pick` chooses which cards count; `step` is 1 (next) or -1 (previous). */
  move(pick, step = 1) {
    const newest = this.state.order === 'newest';
    let cards = this.view.allCards().filter((el) => !el.hidden && pick(el));
    if (newest) cards = cards.reverse();
    if (!cards.length) return null;
    const current = document.activeElement && document.activeElement.closest ? document.activeElement.closest('.card') : null;
    let at;
    if (current) {
      const all = this.view.allCards().filter((el) => !el.hidden);
      const order = newest ? all.reverse() : all;
      const index = order.indexOf(current);
      const candidates = step > 0 ? order.slice(index + 1) : order.slice(0, Math.max(index, 0)).reverse();
      at = candidates.find((el) => cards.includes(el));
    } else {
      const top = document.querySelector('.filters').getBoundingClientRect().bottom;
      at = step > 0 ? cards.find((el) => el.getBoundingClientRect().top > top + 1) : [...cards].reverse().find((el) => el.getBoundingClientRect().top < top - 1);
    }
    at = at || (step > 0 ? cards[0] : cards[cards.length - 1]);
    at.scrollIntoView({ block: 'start' });
    at.focus({ preventScroll: true });
    return at;
  }

  nextError() {
    return this.move((el) => ERROR_STATES.has(el.dataset.state));
  }
}

/** A button's text: beside its icon, or (on a narrow filter bar) its name only. */
function label(text) {
  return h('span', { class: 'label' }, text);
}

function fill(select, all, values, current, labels = {}) {
  const want = [all, ...values].join('\n');
  if (select.dataset.values !== want) {
    select.dataset.values = want;
    select.replaceChildren(h('option', { value: '' }, all), ...values.map((v) => h('option', { value: v }, labels[v] || v)));
    // A value from the URL that no card has yet stays chosen.
    if (current && !values.includes(current)) select.append(h('option', { value: current }, labels[current] || current));
  }
  select.value = current;
}
