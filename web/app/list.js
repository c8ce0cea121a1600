// The session list at `/`: every session, newest first, searchable, with its counts and
// when it last changed, and a form for a new one.

import { api, ID } from './api.js';
import { h, showError, when } from './util.js';

/** "12 calls" when the server counts calls, else its messages (older servers). A count
 * of calls waiting for a person or failed, when the server gives one, shows beside it. */
export function sessionCounts(s) {
  const out = h('span', { class: 'counts' });
  if (typeof s.callCount === 'number') out.append(`${s.callCount} call${s.callCount === 1 ? '' : 's'}`);
  else out.append(`${s.messageCount} message${s.messageCount === 1 ? '' : 's'}`);
  if (typeof s.pendingCount === 'number' && s.pendingCount > 0) out.append(' · ', h('span', { class: 'pending-count' }, `${s.pendingCount} waiting`));
  if (typeof s.errorCount === 'number' && s.errorCount > 0) out.append(' · ', h('span', { class: 'error-count' }, `${s.errorCount} failed`));
  return out;
}

/** "3 min ago", with the full date on hover. */
export function relativeTime(ms) {
  const el = h('time', { title: when(ms) });
  try {
    el.setAttribute('datetime', new Date(ms).toISOString());
  } catch { /* not a date: no attribute */ }
  const s = Math.round((Date.now() - ms) / 1000);
  el.textContent = !Number.isFinite(s) ? '' : s < 45 ? 'just now' : s < 3600 ? `${Math.round(s / 60)} min ago`
    : s < 86400 ? `${Math.round(s / 3600)} h ago` : s < 86400 * 7 ? `${Math.round(s / 86400)} d ago` : new Date(ms).toLocaleDateString();
  return el;
}

export async function listView(main) {
  document.title = 'toolwire';
  const form = h('form', { class: 'new-session' },
    h('input', { name: 'title', placeholder: 'Title of a new session', maxlength: 200, 'aria-label': 'Title of a new session' }),
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
  const search = h('input', { type: 'search', placeholder: 'Search sessions', 'aria-label': 'Search sessions', 'data-role': 'search' });
  main.replaceChildren(h('div', { class: 'page-head' }, h('h1', {}, 'Sessions'), form),
    h('div', { class: 'list-tools' }, search));
  try {
    const { sessions } = await api('/api/sessions?limit=200');
    const list = h('ul', { class: 'sessions' });
    const rows = [];
    for (const s of sessions) {
      if (!ID.test(s.id)) continue;
      const li = h('li', { 'data-session-id': s.id },
        h('a', { href: `/sessions/${s.id}` },
          h('span', {}, h('span', { class: 's-title' }, s.title || 'Untitled session'), h('span', { class: 's-id' }, s.id)),
          h('span', { class: 's-count' }, sessionCounts(s)),
          h('span', { class: 's-when' }, relativeTime(s.updatedAtMs))));
      rows.push([`${s.title || ''} ${s.id}`.toLowerCase(), li]);
      list.append(li);
    }
    const empty = h('li', { class: 'empty' }, 'No sessions yet. Start one above, or run `toolwire call`.');
    if (!rows.length) list.append(empty);
    search.addEventListener('input', () => {
      const q = search.value.trim().toLowerCase();
      let shown = 0;
      for (const [text, li] of rows) {
        li.hidden = !!q && !text.includes(q);
        if (!li.hidden) shown += 1;
      }
      empty.textContent = 'No session matches.';
      if (!shown && rows.length) list.append(empty);
      else empty.remove();
    });
    main.append(list);
  } catch (err) {
    showError(main, err);
  }
}
