// A session's live event feed: an EventSource resumed from the last event applied after
// any drop (so nothing is lost or applied twice), and each event applied to the view.

import { EVENT_TYPES } from './wire.js';
import { h, showError } from './util.js';

/** The event feed, resumed from the last event seen after any drop. */
export function follow(view) {
  const conn = document.getElementById('conn');
  // Waits between reopenings double up to 30 s: a server at its feed cap (503) or
  // restarting is not asked again every second by every open page.
  let wait = 1000;
  const reopen = async () => {
    try {
      const r = await fetch(`/api/sessions/${view.id}`, { method: 'GET' });
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
    if (view.source) view.source.close();
    const source = new EventSource(`/api/sessions/${view.id}/events?after=${view.after}`);
    view.source = source;
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
      if (typeof ev.seq !== 'number' || ev.seq <= view.after) return;
      view.after = ev.seq;
      apply(view, ev);
    };
    // Generated from the Rust types (web/app/wire.js), so a new event cannot be missed.
    for (const type of EVENT_TYPES) source.addEventListener(type, onEvent);
  };
  view.reconnect = open;
  open();
}

/** The events after which the session's counts (calls, waiting, failed) differ. */
const COUNTED = new Set(['tool_call_started', 'tool_result', 'suspended', 'resolved']);

function apply(view, ev) {
  // An event may be about a stored call whose card is not made yet, and what it adds goes
  // after every stored message.
  view.flush();
  if (COUNTED.has(ev.type)) view.countsChanged();
  switch (ev.type) {
    case 'tool_call_started': {
      const card = view.card(ev.callId, ev.toolName, ev.input);
      // A person's call (an MCP App's poll among them) says so as it starts, as the stored
      // call does when a page loads it.
      if (ev.byPerson) card.madeBy(ev.byPerson.via);
      break;
    }
    case 'progress':
      view.card(ev.callId).progress(ev.done, ev.total, ev.message);
      break;
    case 'tool_result':
      if (ev.result) {
        view.card(ev.result.callId, ev.result.toolName).setResult(ev.result);
        view.settle(ev.result);
      }
      break;
    case 'suspended':
      view.card(ev.callId).suspend(ev.suspension);
      break;
    case 'resolved':
      view.card(ev.callId).resolved();
      break;
    case 'widget':
      view.widget(ev.widget);
      break;
    case 'turn_started':
      view.streaming = h('div', { class: 'msg assistant streaming' });
      view.append(view.streaming);
      break;
    case 'assistant_delta':
      if (!view.streaming) {
        view.streaming = h('div', { class: 'msg assistant streaming' });
        view.append(view.streaming);
      }
      view.streaming.append(document.createTextNode(ev.text || ''));
      break;
    case 'turn_ended':
      // The stored messages are the record: redraw from them once the turn is done.
      view.load().catch((err) => showError(view.timeline, err));
      break;
    default:
      break;
  }
}
