// The page's side of MCP Apps: what an app in a card may ask of the page (its own server's
// tools through the same approvals as any call, resources, links the person agrees to
// open, messages to the model, logs). The postMessage protocol itself is mcp-app.js.
//
// An app re-drawn from the session's history (opening or reloading a session) gets its
// stored input and result and calls nothing until the person uses it: looking at a
// session must not run a tool or store one more call. Until then, a call the app
// already made (the same tool and arguments, stored as made by this app) is answered
// with its stored result; any other is refused, saying why.

import { api, resourceUrl } from './api.js';

/** How long after its last link dialog closed an app must wait to ask again. */
const LINK_GAP_MS = 2000;

/** Whether `u` is one of this server's own: the page's origin or the sandbox's, under
 * any name of a loopback address (`localhost`, `127.x.y.z`, `[::1]`) with the same port.
 * A link there would open a stored document or an API route with the page's rights. */
function ownOrigin(view, u) {
  const port = (x) => x.port || (x.protocol === 'https:' ? '443' : '80');
  const own = [location];
  try {
    if (view.info.sandboxOrigin) own.push(new URL(view.info.sandboxOrigin));
  } catch { /* no sandbox: nothing more is ours */ }
  const host = u.hostname.replace(/\.$/, '').toLowerCase();
  const loopback = host === 'localhost' || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host)
    || host === '[::1]' || host === '0.0.0.0' || host === '[::]' || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(host);
  return own.some((o) => u.origin === o.origin || (loopback && port(u) === port(o)));
}

/** Opens a link that the MCP App in `card` asked for, once the person agrees in a dialog
 * that names the app. Refused without asking: anything but http(s), a URL with
 * credentials (`https://trusted.example@elsewhere`), and this server's own origins (its
 * pages and everything under /api). Refused too while a link dialog is open, and for
 * LINK_GAP_MS after the app's last one closed: an app cannot stack dialogs or ask again
 * and again until the person clicks OK. */
function openLink(view, card, url) {
  let u;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return false;
  if (u.username || u.password || ownOrigin(view, u)) return false;
  const tool = view.tools.get(card.name);
  const origin = tool && tool.origin;
  const server = origin ? origin.source : null;
  // Limited per server: one server's apps in several cards share the limit.
  const who = server || card.name;
  if (view.linkDialogOpen || Date.now() - (view.linkClosedAt.get(who) || 0) < LINK_GAP_MS) return false;
  view.linkDialogOpen = true;
  let yes = false;
  try {
    const app = server ? `The app of the tool "${origin.name}" (MCP server "${server}")` : `The app of the tool "${card.name}"`;
    // eslint-disable-next-line no-alert
    yes = window.confirm(`${app} asks to open this link in a new tab:\n\n${u.href}\n\nOpen it?`);
  } finally {
    view.linkDialogOpen = false;
    view.linkClosedAt.set(who, Date.now());
  }
  if (!yes) return false;
  window.open(u.href, '_blank', 'noopener,noreferrer');
  return true;
}

/** JSON with its object keys sorted: two arguments are the same call when equal. */
function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  return JSON.stringify(v === undefined ? null : v);
}

/** The stored result of the latest call the app of `card` made of its server's tool
 * `name` with `args`, or null: what an app re-drawn from history is answered with. */
function storedAppCall(view, card, name, args) {
  const own = view.tools.get(card.name);
  const source = own && own.origin ? own.origin.source : null;
  if (!source) return null;
  const sibling = [...view.tools.values()].find((t) => t.origin && t.origin.source === source && t.origin.name === name);
  if (!sibling) return null;
  const want = canonical(args);
  const made = view.allCards().map((el) => el.toolwireCard).filter((c) => c && c.via === `app:${card.name}`
    && c.name === sibling.name && c.result && c.result.status !== 'suspended' && canonical(c.input) === want);
  return made.length ? made[made.length - 1].result : null;
}

/** The server's own `CallToolResult` for a stored result: its raw payload, kept beside it
 * (`metadata.rawRef`), or null. An app is given what its server sent, whole: the stored
 * result moves inline media out of `structuredContent` (a stand-in names where it went),
 * which an app that reads its own bytes (server-pdf's `read_pdf_bytes`) cannot use. */
async function rawResult(result) {
  const url = result && result.metadata && resourceUrl(result.metadata.rawRef);
  if (!url) return null;
  const r = await fetch(url, { credentials: 'same-origin' });
  if (!r.ok) return null;
  const raw = await r.json();
  return raw && typeof raw === 'object' && !Array.isArray(raw) && Array.isArray(raw.content) ? raw : null;
}

/** What an MCP App in `card` may ask of the page: tools of its own server that apps
 * may call (through the same approvals as any call), links the person agrees to open,
 * messages to the model when there is one, and logs. A card whose result came from the
 * stored history (not live on the feed) calls and messages only once its app is used. */
export function appHost(view, card) {
  const tool = view.tools.get(card.name);
  return {
    sandboxOrigin: view.info.sandboxOrigin,
    version: view.info.version,
    // The app knows its tool by its own server's name for it.
    tool: tool ? { ...tool, name: tool.origin ? tool.origin.name : tool.name } : undefined,
    input: card.input,
    result: card.result,
    mounted: (handle) => view.apps.push(handle),
    // The server finds the tool on the app's own server and checks that apps may call
    // it; its refusal (404, 403) becomes the app's error.
    callTool: async (name, args, used) => {
      if (!card.live && !used) {
        const stored = storedAppCall(view, card, name, args);
        if (stored) return stored;
        throw new Error(`this app was re-drawn from the session's history: it calls tools (here ${name}) once you use it`);
      }
      const accepted = await api(`/api/sessions/${view.id}/calls`, { json: { tool: name, input: args, app: card.name } });
      view.appCalls.set(accepted.callId, card.name);
      const made = view.cards.get(accepted.callId);
      if (made) made.madeBy(`app:${card.name}`);
      return view.resultOf(accepted.callId);
    },
    rawResult,
    readResource: (uri) => api(`/api/tools/${encodeURIComponent(card.name)}/resource`, { json: { uri } }),
    openLink: (url) => openLink(view, card, url),
    sendMessage: async (params, used) => {
      if (!view.info.provider || (!card.live && !used)) return false;
      const text = (Array.isArray(params.content) ? params.content : [])
        .filter((c) => c && c.type === 'text' && typeof c.text === 'string').map((c) => c.text).join('\n');
      if (!text.trim()) return false;
      await api(`/api/sessions/${view.id}/messages`, { json: { text } });
      return true;
    },
    updateModelContext: (params) => view.modelContext.set(card.callId, params),
    log: (params) => console.info('MCP App', card.callId, params),
  };
}
