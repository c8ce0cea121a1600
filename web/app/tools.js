// What the page knows of tools and MCP servers: the tool list (`/api/tools`), the servers
// and their connection state (`/api/servers`, polled while one is connecting), which
// server each tool belongs to, and each tool's hints (approval, MCP annotations).

import { api } from './api.js';

/** Polling of `/api/servers`: fast while a server is on its way up, slow otherwise. */
const POLL_BUSY_MS = 2000;
const POLL_IDLE_MS = 15000;

/** What a tool says of itself: whether it asks first, and its MCP annotations (hints
 * from its server, shown as it declared them). */
export function toolHints(tool) {
  if (!tool) return [];
  const out = [];
  // An MCP App's own tool: the model never sees it, and its app calls it without asking.
  if (tool.hiddenFromModel === true) out.push('app only');
  else if (tool.approval === 'always') out.push('asks for approval');
  const a = tool.annotations || {};
  if (a.readOnlyHint === true) out.push('read-only');
  else if (a.destructiveHint === true) out.push('destructive');
  if (a.idempotentHint === true) out.push('idempotent');
  if (a.openWorldHint === true) out.push('open world');
  return out;
}

/** A tool's title as its source declared it (MCP `title`, or `annotations.title`). */
export function toolTitle(tool) {
  if (!tool) return '';
  const t = typeof tool.title === 'string' ? tool.title : tool.annotations && typeof tool.annotations.title === 'string' ? tool.annotations.title : '';
  return t.trim();
}

/** The tools and servers, kept current; `onChange` listeners redraw what shows them. */
export class Catalogue {
  constructor() {
    /** name → tool schema; the same Map for the page's lifetime (cards hold it). */
    this.tools = new Map();
    /** As `/api/servers` lists them; empty before the endpoint exists (a 404). */
    this.servers = [];
    /** Servers a login was begun for here (polled fast while they wait for it). */
    this.loggingIn = new Set();
    this.listeners = new Set();
    this.timer = null;
    this.readyNames = new Set();
  }

  onChange(fn) {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  changed() {
    for (const fn of this.listeners) {
      try {
        fn(this);
      } catch (err) {
        console.error(err);
      }
    }
  }

  async start() {
    await Promise.all([this.loadTools(), this.loadServers()]);
    this.schedule();
  }

  async loadTools() {
    const tools = await api('/api/tools');
    this.tools.clear();
    for (const t of Array.isArray(tools) ? tools : []) if (t && typeof t.name === 'string') this.tools.set(t.name, t);
  }

  /** Reads the servers; a server that became ready since the last read brings new tools. */
  async loadServers() {
    let servers = [];
    try {
      const body = await api('/api/servers');
      servers = body && Array.isArray(body.servers) ? body.servers.filter((s) => s && typeof s.name === 'string') : [];
    } catch (err) {
      // Before the server knew this route (404): no servers to show. Anything else is
      // kept quiet too: the tool list still works without server states.
      if (err.status !== 404) console.warn('servers:', err.message);
      this.servers = [];
      return false;
    }
    const ready = new Set(servers.filter((s) => s.state === 'ready').map((s) => s.name));
    const newlyReady = [...ready].some((n) => !this.readyNames.has(n));
    this.readyNames = ready;
    this.servers = servers;
    for (const name of [...this.loggingIn]) {
      if (!servers.some((s) => s.name === name && s.state === 'needs_login')) this.loggingIn.delete(name);
    }
    return newlyReady;
  }

  busy() {
    return this.servers.some((s) => s.state === 'connecting' || s.state === 'restarting'
      || (s.state === 'needs_login' && this.loggingIn.has(s.name)));
  }

  /** A login to `name` was begun in another tab: poll fast until it is no longer waiting. */
  expectLogin(name) {
    this.loggingIn.add(name);
    this.schedule();
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.poll(), this.busy() ? POLL_BUSY_MS : POLL_IDLE_MS);
  }

  async poll() {
    const before = JSON.stringify(this.servers);
    try {
      const newlyReady = await this.loadServers();
      if (newlyReady) await this.loadTools();
      if (newlyReady || JSON.stringify(this.servers) !== before) this.changed();
    } catch { /* the server is away: the next poll asks again */ }
    this.schedule();
  }

  /** The server whose `tools` list names `toolName`, or null (a built-in tool). */
  serverOf(toolName) {
    return this.servers.find((s) => Array.isArray(s.tools) && s.tools.includes(toolName)) || null;
  }

  /** Tools grouped by server, the MCP servers first (their state is what changes, and a
   * failed one must be seen), then the built-ins: [{ server|null, tools: [...] }]. */
  groups() {
    const byServer = new Map(this.servers.map((s) => [s.name, []]));
    const builtin = [];
    for (const t of this.tools.values()) {
      const s = this.serverOf(t.name);
      if (s) byServer.get(s.name).push(t);
      else builtin.push(t);
    }
    const out = this.servers.map((s) => ({ server: s, tools: byServer.get(s.name) || [] }));
    if (builtin.length) out.push({ server: null, tools: builtin });
    return out;
  }
}
