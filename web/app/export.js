// The session's Export menu: the request body each provider would be sent for the
// session (the server's `/export`, after budgets and media routing), the stored session,
// and the MCP results as their servers sent them (each result's kept raw payload), each
// as a JSON file to download.

import { api, resourceUrl } from './api.js';
import { h, showError } from './util.js';
import { menuButton } from './menu.js';
import { PROVIDERS } from './modelview.js';

/** A file name part from an id or a provider: letters, digits, `-` and `_` only. */
function safe(s) {
  return String(s).replace(/[^\w-]+/g, '_').slice(0, 80);
}

/** Saves `text` as the file `name`. */
function save(name, text) {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/json' }));
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** Every stored result of the session whose server's payload was kept, with that
 * payload as received (JSON when it is JSON, else its text), in the session's order. */
async function rawResults(sessionId) {
  const { session, messages } = await api(`/api/sessions/${sessionId}`);
  const results = [];
  for (const m of Array.isArray(messages) ? messages : []) {
    const r = m && m.role === 'tool_result' ? m.content : null;
    const url = resourceUrl(r && r.metadata && r.metadata.rawRef);
    if (!url) continue;
    const got = await fetch(url, { credentials: 'same-origin' });
    if (!got.ok) throw new Error(`the MCP result of ${r.callId}: ${got.status} ${got.statusText}`);
    const text = await got.text();
    let raw = text;
    try {
      raw = JSON.parse(text);
    } catch { /* kept as text */ }
    results.push({ callId: r.callId, toolName: r.toolName, raw });
  }
  return { sessionId: session.id, title: session.title || null, results };
}

/** The Export menu of session `view.id`. Returns { button, list } (menu.js). */
export function exportMenu(view) {
  const id = view.id;
  const item = (what, icon, label, title) => h('button', { type: 'button', class: `i ${icon}`, 'data-export': what, title }, h('span', { class: 'label' }, label));
  const items = [
    ...PROVIDERS.map(([p, name]) => item(p, 'i-braces', `${name} request`, `The request body ${name} would be sent for this session`)),
    item('session', 'i-braces', 'Stored session', 'The session\'s stored messages, as the API gives them'),
    item('raw', 'i-package', 'MCP results as received', 'Every result\'s payload as its MCP server sent it'),
  ];
  const menu = menuButton('Export', 'i-download', items, { 'data-menu': 'export' });
  menu.list.addEventListener('click', async (e) => {
    const b = e.target.closest('button[data-export]');
    if (!b) return;
    const what = b.dataset.export;
    b.disabled = true;
    try {
      if (what === 'raw') {
        save(`${safe(id)}-mcp-results.json`, JSON.stringify(await rawResults(id), null, 2));
      } else if (what === 'session') {
        save(`${safe(id)}.json`, JSON.stringify(await api(`/api/sessions/${id}`), null, 2));
      } else {
        const body = await api(`/api/sessions/${id}/export?provider=${encodeURIComponent(what)}`);
        save(`${safe(id)}-${safe(what)}.json`, JSON.stringify(body, null, 2));
      }
    } catch (err) {
      showError(view.main.querySelector('.session-head'), err);
    } finally {
      b.disabled = false;
    }
  });
  return menu;
}
