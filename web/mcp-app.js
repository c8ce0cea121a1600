//! The MCP Apps host (extension `io.modelcontextprotocol/ui`, stable 2026-01-26) of the web
//! app: an `mcp_app` widget becomes a frame of the sandbox proxy on the server's second
//! origin, which loads the app's HTML under a policy built from its declared domains.
//! This module speaks the host side of the postMessage JSON-RPC: `ui/initialize` (host
//! context: theme, display mode, container dimensions, locale), then tool-input and
//! tool-result once the view says `initialized`, size changes, host-context changes, and
//! teardown; and it answers the view's `tools/call` (the same approval rules as any call,
//! refused for tools whose visibility leaves out "app" or that belong to another server),
//! telling the page whether the person has used the app (an app re-drawn from history
//! may call nothing until then: apphost.js),
//! `resources/read` (on the app's own server), `ui/open-link` (the page asks the person,
//! one dialog at a time, never for the server's own origins),
//! `ui/message`, `ui/update-model-context` and logs.

const PROTOCOL = '2026-01-26';
const MAX_HEIGHT = 2000;
const TEARDOWN_WAIT_MS = 500;
const CSP_KEYS = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'];

/** JSON-RPC errors the host answers with. */
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const REFUSED = -32000;

class RpcError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** The declared CSP, only its known lists of strings (the server validates each). */
function declaredCsp(csp) {
  const out = {};
  if (!csp || typeof csp !== 'object') return out;
  for (const key of CSP_KEYS) {
    if (Array.isArray(csp[key])) out[key] = csp[key].filter((d) => typeof d === 'string').slice(0, 64);
  }
  return out;
}

/** A stored toolwire result as the MCP `CallToolResult` an app expects. */
export function toCallToolResult(result) {
  const content = [];
  let structuredContent;
  for (const v of (result && Array.isArray(result.output)) ? result.output : []) {
    if (!v || typeof v !== 'object') continue;
    if (v.kind === 'structured' && structuredContent === undefined && v.data && typeof v.data === 'object') {
      structuredContent = v.data;
      continue;
    }
    const text = v.data && typeof v.data === 'object' && typeof v.data.content === 'string' ? v.data.content : JSON.stringify(v.data);
    content.push({ type: 'text', text });
  }
  if (result && result.error && result.error.message) content.push({ type: 'text', text: String(result.error.message) });
  const out = { content, isError: !!result && result.status !== 'success' && result.status !== 'partial' };
  if (structuredContent !== undefined) out.structuredContent = structuredContent;
  return out;
}

function theme() {
  // The person's choice in the page (app/theme.js) wins over the system's.
  const chosen = document.documentElement.dataset.theme;
  if (chosen === 'light' || chosen === 'dark') return chosen;
  return window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/**
 * Mounts the app of `widget` in `box`. `host` is what the page lends it: `sandboxOrigin`,
 * `tool` (the schema of the call that made it), `input`, `result`, and the functions
 * `callTool(name, args, used)`, `openLink(url)`, `sendMessage(params, used)`,
 * `updateModelContext(params)`, `log(params)`; `used` says whether the person has used
 * the app (clicked or typed in it). Returns `{teardown(reason)}`.
 */
export function mountApp(box, widget, host) {
  const app = (widget && widget.app) || {};
  const fallback = () => {
    const p = document.createElement('p');
    p.className = 'tw-fallback';
    p.textContent = String((widget && widget.fallback) || '');
    box.append(p);
    return { teardown: async () => {} };
  };
  if (!host || typeof host.sandboxOrigin !== 'string' || typeof app.html !== 'string') return fallback();
  let sandboxOrigin;
  try {
    sandboxOrigin = new URL(host.sandboxOrigin).origin;
  } catch {
    return fallback();
  }
  const csp = declaredCsp(app.csp);
  const url = new URL('/sandbox', sandboxOrigin);
  url.searchParams.set('host', location.origin);
  url.searchParams.set('csp', JSON.stringify(csp));
  const frame = document.createElement('iframe');
  frame.className = 'tw-app-frame';
  frame.title = `MCP App ${String(app.uri || '')}`;
  // The proxy needs both (the extension says so); its origin differs from the page's.
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin');
  frame.style.height = '120px';
  frame.src = url.href;
  box.append(frame);

  let initialized = false;
  // Whether the person has used the app: focus is in its frame while the page has a
  // fresh user activation (a click or key press in a frame activates its ancestors; an
  // app can focus itself but not make one). Once true, it stays.
  let used = false;
  const usedNow = () => {
    const activation = navigator.userActivation;
    if (!used && document.activeElement === frame && (!activation || activation.isActive)) used = true;
    return used;
  };
  let nextId = 1;
  const waiting = new Map();
  const send = (message) => frame.contentWindow && frame.contentWindow.postMessage({ jsonrpc: '2.0', ...message }, sandboxOrigin);
  const notify = (method, params) => send({ method, params });
  const request = (method, params, ms) => new Promise((resolve) => {
    const id = `host-${nextId++}`;
    const timer = setTimeout(() => { waiting.delete(id); resolve(null); }, ms);
    waiting.set(id, (reply) => { clearTimeout(timer); resolve(reply); });
    send({ id, method, params });
  });

  // What the app is given of a stored result: its server's own CallToolResult when the
  // page can read it (`host.rawResult`), else one built from the stored result.
  const appResult = async (r) => (host.rawResult && await host.rawResult(r).catch(() => null)) || toCallToolResult(r);

  const context = () => ({
    theme: theme(),
    displayMode: 'inline',
    availableDisplayModes: ['inline'],
    containerDimensions: { width: Math.max(200, Math.round(box.clientWidth || 600)), maxHeight: MAX_HEIGHT },
    locale: navigator.language,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    platform: 'web',
    userAgent: 'toolwire',
    ...(host.tool ? { toolInfo: { tool: host.tool } } : {}),
  });

  const handlers = {
    'ui/initialize': () => ({
      protocolVersion: PROTOCOL,
      hostInfo: { name: 'toolwire', version: host.version || '0' },
      hostCapabilities: {
        openLinks: {},
        serverTools: {},
        serverResources: {},
        logging: {},
        message: { text: {} },
        updateModelContext: { text: {} },
        sandbox: { csp },
      },
      hostContext: context(),
    }),
    ping: () => ({}),
    'tools/call': async (params, byPerson) => {
      if (!params || typeof params.name !== 'string') throw new RpcError(INVALID_PARAMS, 'tools/call needs a tool name');
      const args = params.arguments && typeof params.arguments === 'object' ? params.arguments : {};
      try {
        return await appResult(await host.callTool(params.name, args, byPerson));
      } catch (err) {
        throw new RpcError(REFUSED, err.message);
      }
    },
    'resources/read': async (params) => {
      if (!params || typeof params.uri !== 'string') throw new RpcError(INVALID_PARAMS, 'resources/read needs a uri');
      try {
        return await host.readResource(params.uri);
      } catch (err) {
        throw new RpcError(REFUSED, err.message);
      }
    },
    'ui/open-link': async (params) => ({ isError: !(params && await host.openLink(String(params.url || ''))) }),
    'ui/message': async (params, byPerson) => ({ isError: !(await host.sendMessage(params || {}, byPerson)) }),
    'ui/update-model-context': (params) => {
      host.updateModelContext(params || {});
      return {};
    },
    'ui/request-display-mode': () => ({ mode: 'inline' }),
  };

  const onInitialized = () => {
    if (initialized) return;
    initialized = true;
    notify('ui/notifications/tool-input', { arguments: host.input && typeof host.input === 'object' ? host.input : {} });
    const r = host.result;
    if (r && r.status === 'error' && r.error && r.error.code === 'cancelled') notify('ui/notifications/tool-cancelled', { reason: (r.error && r.error.message) || 'cancelled' });
    else if (r) appResult(r).then((result) => notify('ui/notifications/tool-result', result));
  };

  const onMessage = async (event) => {
    if (event.source !== frame.contentWindow || event.origin !== sandboxOrigin) return;
    const m = event.data;
    if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0') return;
    if (m.method === 'ui/notifications/sandbox-proxy-ready') {
      notify('ui/notifications/sandbox-resource-ready', { html: app.html, csp });
      return;
    }
    if (m.method === undefined && waiting.has(m.id)) {
      waiting.get(m.id)(m);
      waiting.delete(m.id);
      return;
    }
    if (typeof m.method !== 'string') return;
    if (m.id === undefined || m.id === null) {
      if (m.method === 'ui/notifications/initialized') onInitialized();
      else if (m.method === 'ui/notifications/size-changed') {
        const height = Number(m.params && m.params.height);
        if (Number.isFinite(height) && height > 0) frame.style.height = `${Math.min(Math.ceil(height), MAX_HEIGHT)}px`;
      } else if (m.method === 'notifications/message') host.log(m.params || {});
      else if (m.method === 'ui/notifications/request-teardown') handle.teardown('the app asked');
      return;
    }
    const handler = handlers[m.method];
    try {
      if (!handler) throw new RpcError(METHOD_NOT_FOUND, `${m.method} is not supported by this host`);
      send({ id: m.id, result: await handler(m.params, usedNow()) });
    } catch (err) {
      send({ id: m.id, error: { code: err.code || REFUSED, message: String(err.message || err) } });
    }
  };
  window.addEventListener('message', onMessage);

  const media = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;
  const onTheme = () => { if (initialized) notify('ui/notifications/host-context-changed', { theme: theme() }); };
  if (media) media.addEventListener('change', onTheme);
  window.addEventListener('toolwire-theme', onTheme);

  const handle = {
    frame,
    /** Asks the view to wind down (waiting briefly for its answer), then removes it. */
    async teardown(reason = 'closed') {
      if (initialized) await request('ui/resource-teardown', { reason }, TEARDOWN_WAIT_MS);
      window.removeEventListener('message', onMessage);
      if (media) media.removeEventListener('change', onTheme);
      window.removeEventListener('toolwire-theme', onTheme);
      frame.remove();
    },
  };
  return handle;
}
