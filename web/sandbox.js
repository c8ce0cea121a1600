//! The MCP Apps sandbox proxy (served by `toolwire serve` on a second port, another
//! origin than the app's). It tells the host it is ready, loads the HTML the host sends
//! into an inner `srcdoc` frame sandboxed to `allow-scripts` only (an opaque origin of
//! its own, under this page's policy, which the server built from the app's declared
//! domains), and relays every other JSON-RPC message between host and app, both ways.
//! Messages are only taken from the host origin named in the URL (which the server
//! checked) and from the inner frame.

const host = new URLSearchParams(location.search).get('host');
let inner = null;

const isSandboxMethod = (m) => typeof m === 'string' && m.startsWith('ui/notifications/sandbox-');

function toHost(message) {
  window.parent.postMessage(message, host);
}

function load(params) {
  // One app per proxy; a second resource message is ignored.
  if (inner || !params || typeof params.html !== 'string') return;
  inner = document.createElement('iframe');
  // The host's `sandbox` override is not taken: it could only loosen this. No
  // permissions (camera, microphone, ...) are delegated.
  inner.setAttribute('sandbox', 'allow-scripts');
  inner.setAttribute('title', 'MCP App');
  Object.assign(inner.style, { border: '0', width: '100%', height: '100%', display: 'block' });
  inner.srcdoc = params.html;
  document.body.append(inner);
}

window.addEventListener('message', (event) => {
  const message = event.data;
  if (!message || typeof message !== 'object' || message.jsonrpc !== '2.0') return;
  if (event.source === window.parent && event.origin === host) {
    if (message.method === 'ui/notifications/sandbox-resource-ready') load(message.params);
    else if (!isSandboxMethod(message.method) && inner && inner.contentWindow) inner.contentWindow.postMessage(message, '*');
  } else if (inner && event.source === inner.contentWindow && !isSandboxMethod(message.method)) {
    toHost(message);
  }
});

Object.assign(document.documentElement.style, { height: '100%' });
Object.assign(document.body.style, { margin: '0', height: '100%' });
if (host) toHost({ jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready', params: {} });
