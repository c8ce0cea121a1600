// The sidebar: sessions (searchable, newest first, counts and state at a glance) and the
// tools grouped by MCP server (searchable, each server's state, titles and hint badges).
// On narrow screens it is a drawer opened from the top bar.

import { api, ID } from './api.js';
import { h, showError } from './util.js';
import { toolHints, toolTitle } from './tools.js';
import { sessionCounts, relativeTime } from './list.js';

/** How often the sidebar reads the session list again. */
const SESSIONS_POLL_MS = 15000;

const BADGE = { 'asks for approval': 'approval', 'app only': 'app-only', 'read-only': 'read-only', destructive: 'destructive' };

/** The hint badges that matter at a glance: read-only, destructive, needs approval. */
export function badges(tool) {
  return h('span', { class: 'badges' }, toolHints(tool).filter((t) => BADGE[t])
    .map((t) => h('span', { class: `badge ${BADGE[t]}` }, t === 'asks for approval' ? 'needs approval' : t)));
}

export class Sidebar {
  /** `opts.sessions`: list sessions here (not on `/`, whose page is the list);
   * `opts.current`: the open session's id; `opts.onTool(name)`: a tool was picked. */
  constructor(el, catalogue, opts = {}) {
    this.el = el;
    this.catalogue = catalogue;
    this.opts = opts;
    this.sessions = [];
    this.toolsBox = h('div', { class: 'tool-groups' });
    this.toolQuery = '';
    this.openGroups = new Map();
    catalogue.onChange(() => this.drawTools());
    wireDrawer(el);
  }

  async start() {
    const parts = [];
    if (this.opts.sessions) parts.push(this.sessionsSection());
    parts.push(this.toolsSection());
    this.el.replaceChildren(...parts);
    this.drawTools();
    if (this.opts.sessions) {
      await this.loadSessions();
      // Sessions made elsewhere (a CLI call, another tab) and new counts show up.
      setInterval(() => { if (!document.hidden) this.loadSessions(); }, SESSIONS_POLL_MS);
    }
  }

  sessionsSection() {
    this.sessionList = h('ul', { class: 'side-list', 'aria-label': 'Sessions' });
    const search = h('input', { type: 'search', placeholder: 'Search sessions', 'aria-label': 'Search sessions' });
    this.sessionSearch = search;
    search.addEventListener('input', () => this.drawSessions(search.value));
    const box = h('section', { class: 'side-section', 'aria-labelledby': 'side-sessions' },
      h('div', { class: 'side-head' }, h('h2', { id: 'side-sessions' }, 'Sessions'),
        h('button', { type: 'button', class: 'small ghost', title: 'New session', onclick: () => newSession(box) }, 'New')),
      search, this.sessionList);
    return box;
  }

  async loadSessions() {
    try {
      const { sessions } = await api('/api/sessions?limit=200');
      this.sessions = sessions.filter((s) => s && ID.test(s.id || ''));
      this.drawSessions(this.sessionSearch ? this.sessionSearch.value : '');
    } catch (err) {
      showError(this.sessionList, err);
    }
  }

  drawSessions(query) {
    const q = query.trim().toLowerCase();
    const shown = this.sessions.filter((s) => !q || (s.title || '').toLowerCase().includes(q) || s.id.includes(q));
    this.sessionList.replaceChildren(...shown.map((s) => h('li', { 'data-session-id': s.id },
      h('a', { href: `/sessions/${s.id}`, 'aria-current': s.id === this.opts.current ? 'page' : null },
        h('span', { class: 'side-title' }, s.title || s.id),
        h('span', { class: 'side-meta' }, sessionCounts(s), h('span', {}, '·'), relativeTime(s.updatedAtMs))))));
    if (!shown.length) this.sessionList.append(h('li', { class: 'side-empty' }, q ? 'No session matches.' : 'No sessions yet.'));
  }

  toolsSection() {
    const search = h('input', { type: 'search', placeholder: 'Search tools', 'aria-label': 'Search tools' });
    search.addEventListener('input', () => {
      this.toolQuery = search.value.trim().toLowerCase();
      this.drawTools();
    });
    return h('section', { class: 'side-section', 'aria-labelledby': 'side-tools' },
      h('div', { class: 'side-head' }, h('h2', { id: 'side-tools' }, 'Servers and tools')),
      search, this.toolsBox);
  }

  drawTools() {
    const q = this.toolQuery;
    const match = (t) => !q || t.name.toLowerCase().includes(q) || toolTitle(t).toLowerCase().includes(q)
      || (t.description || '').toLowerCase().includes(q);
    const groups = this.catalogue.groups();
    const out = [];
    for (const { server, tools } of groups) {
      const shown = tools.filter(match);
      if (q && !shown.length) continue;
      const key = server ? `s:${server.name}` : 'builtin';
      const details = h('details', { class: 'server', 'data-server': server ? server.name : '' },
        h('summary', {},
          h('span', { class: 'server-name' }, server ? server.name : 'Built-in tools'),
          server ? h('span', { class: 'state-pill', 'data-state': server.state || 'idle' }, String(server.state || 'idle').replace('_', ' ')) : null,
          h('span', { class: 'count' }, String(tools.length))));
      // Open unless the person closed it; a search opens every group with a match.
      details.open = q ? true : this.openGroups.get(key) ?? true;
      details.addEventListener('toggle', () => { if (!q) this.openGroups.set(key, details.open); });
      // What it runs, and the revision it speaks once it is up.
      const speaks = server && server.protocol ? h('span', { class: 'server-protocol' }, `MCP ${server.protocol}`) : null;
      if (server && (server.target || speaks)) {
        details.append(h('div', { class: 'server-target' }, String(server.target || ''), server.target && speaks ? ' · ' : '', speaks));
      }
      if (server && server.reason) details.append(h('div', { class: 'server-reason' }, String(server.reason)));
      if (server && server.warning) details.append(h('div', { class: 'server-warning' }, String(server.warning)));
      if (server && server.state === 'needs_login') {
        details.append(h('button', { type: 'button', class: 'server-login', onclick: () => this.logIn(server.name) }, 'Log in'));
      } else if (server && String(server.target || '').startsWith('http')) {
        details.append(h('button', { type: 'button', class: 'server-logout', onclick: () => this.logOut(server.name) }, 'Log out'));
      }
      const list = h('ul', { class: 'side-list' });
      for (const t of shown) {
        const title = toolTitle(t);
        const inner = [h('span', { class: 'side-title' }, t.name),
          title || t.description ? h('span', { class: 'side-sub' }, title || firstLine(t.description)) : null,
          toolHints(t).some((x) => BADGE[x]) ? badges(t) : null];
        list.append(h('li', { 'data-tool-name': t.name }, this.opts.onTool
          ? h('button', { type: 'button', class: 'side-tool', title: t.description || t.name, onclick: () => { closeDrawer(); this.opts.onTool(t.name); } }, inner)
          : h('div', { class: 'side-tool', title: t.description || t.name }, inner)));
      }
      if (!shown.length) list.append(h('li', { class: 'side-empty' }, server && server.state !== 'ready' ? 'No tools yet.' : 'No tools.'));
      details.append(list);
      out.push(details);
    }
    if (!out.length) out.push(h('p', { class: 'side-empty' }, q ? 'No tool matches.' : 'No tools.'));
    this.toolsBox.replaceChildren(...out);
  }

  /** Starts a login to MCP server `name`: its authorization page opens in a new tab, whose
   * redirect comes back to this server and finishes the login there; the catalogue polls
   * until the server is up again. The tab is opened before the request, while the click
   * still counts as the person's (a tab opened after an await is blocked as a popup). */
  async logIn(name) {
    const tab = window.open('', '_blank');
    // The authorization server's page gets no handle on this one.
    if (tab) tab.opener = null;
    try {
      const body = await api(`/api/servers/${encodeURIComponent(name)}/login`, { method: 'POST' });
      const url = body && typeof body.url === 'string' ? body.url : '';
      if (!/^https?:\/\//i.test(url)) throw new Error('the server gave no login page');
      if (tab) tab.location.href = url; else window.location.href = url;
      this.catalogue.expectLogin(name);
    } catch (err) {
      if (tab) tab.close();
      showError(this.toolsBox, err);
    }
  }

  /** Forgets MCP server `name`'s tokens. */
  async logOut(name) {
    try {
      await api(`/api/servers/${encodeURIComponent(name)}/logout`, { method: 'POST' });
      await this.catalogue.poll();
    } catch (err) {
      showError(this.toolsBox, err);
    }
  }
}

function firstLine(text) {
  return String(text || '').split('\n')[0].slice(0, 140);
}

async function newSession(where) {
  try {
    const s = await api('/api/sessions', { json: {} });
    if (ID.test(s.id || '')) location.assign(`/sessions/${s.id}`);
  } catch (err) {
    showError(where, err);
  }
}

function closeDrawer() {
  document.body.classList.remove('nav-open');
  const toggle = document.getElementById('nav-toggle');
  if (toggle) toggle.setAttribute('aria-expanded', 'false');
}

/** The narrow-screen drawer: the top bar's button opens and closes it, Escape closes it. */
function wireDrawer(sidebar) {
  const toggle = document.getElementById('nav-toggle');
  if (!toggle || toggle.dataset.wired) return;
  toggle.dataset.wired = 'true';
  toggle.addEventListener('click', () => {
    const open = !document.body.classList.contains('nav-open');
    document.body.classList.toggle('nav-open', open);
    toggle.setAttribute('aria-expanded', String(open));
    if (open) {
      const first = sidebar.querySelector('input, a, button');
      if (first) first.focus();
    }
  });
  // A click beside the open drawer (on its scrim) closes it.
  document.addEventListener('click', (e) => {
    if (document.body.classList.contains('nav-open') && !sidebar.contains(e.target) && !toggle.contains(e.target)) closeDrawer();
  });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && document.body.classList.contains('nav-open')) {
      closeDrawer();
      toggle.focus();
    }
  });
}
