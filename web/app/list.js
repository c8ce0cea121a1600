// The session list at `/`: every session, newest first, and a form for a new one.

import { api, ID } from './api.js';
import { h, showError, when } from './util.js';

export async function listView(main) {
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
