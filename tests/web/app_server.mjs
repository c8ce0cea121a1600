// An MCP server (the official TypeScript SDK, from tests/mcp) with an MCP App whose view
// runs the official app SDK (@modelcontextprotocol/ext-apps, from tests/web) inside the
// host's sandbox: it logs what the host sends, grows (so it must be resized), calls
// tools through the host, and tries to reach the host page and the API.
import { readFileSync } from 'node:fs';
import { McpServer, StdioServerTransport, z, appSdkScript } from './app_sdk.mjs';

const view = `<!doctype html>
<html><head><meta charset="utf-8"><title>test app</title></head>
<body><button id="again" type="button">again</button><pre id="log"></pre><div id="grow"></div>
<script type="module">${appSdkScript}</script>
<script type="module">
const log = (s) => { document.getElementById('log').textContent += s + '\\n'; };
document.addEventListener('securitypolicyviolation', (e) => log('violation ' + e.effectiveDirective));
const { App } = window.__extApps;
const app = new App({ name: 'toolwire-test-app', version: '1.0.0' });
let input = null;
const gotInput = new Promise((resolve) => { app.ontoolinput = (p) => { input = p.arguments; log('input ' + JSON.stringify(p.arguments)); resolve(); }; });
app.ontoolresult = (r) => log('result ' + JSON.stringify(r.structuredContent ?? null) + ' ' + (r.content?.[0]?.text ?? ''));
await app.connect();
// A call the person asks for: after load, only by a click in the view.
document.getElementById('again').onclick = async () => {
  try {
    const r = await app.callServerTool({ name: 'app_only', arguments: { word: 'again' } });
    log('again ' + (r.isError ? 'error' : (r.content?.[0]?.text ?? JSON.stringify(r))));
  } catch (e) { log('again refused: ' + (e.message || e)); }
};
const ctx = app.getHostContext() || {};
log('context ' + JSON.stringify({ theme: ctx.theme, displayMode: ctx.displayMode, locale: typeof ctx.locale, width: typeof ctx.containerDimensions?.width }));
await gotInput;
try { void window.parent.document.title; log('parent: reachable'); } catch { log('parent: blocked'); }
try { await fetch(input.api + '/api/sessions'); log('fetch: reachable'); } catch { log('fetch: blocked'); }
document.getElementById('grow').style.height = '640px';
const own = await app.readServerResource({ uri: 'ui://test/app' }).catch((e) => ({ error: String(e) }));
log('read ' + (own.contents?.[0]?.mimeType ?? JSON.stringify(own)));
try {
  const r = await app.callServerTool({ name: 'app_only', arguments: { word: 'ping' } });
  log('call ' + (r.content?.[0]?.text ?? JSON.stringify(r)));
} catch (e) { log('call refused: ' + (e.message || e)); }
try {
  const r2 = await app.callServerTool({ name: 'model_only', arguments: {} });
  log('model_only: ' + (r2.isError ? 'error' : 'ran'));
} catch (e) { log('model_only: refused'); }
// A worker of its own making (a blob: URL), which the sandbox's policy allows.
const worker = await new Promise((resolve) => {
  try {
    const w = new Worker(URL.createObjectURL(new Blob(['postMessage("ok")'], { type: 'text/javascript' })));
    w.onmessage = (m) => resolve(m.data);
    w.onerror = () => resolve('blocked');
    setTimeout(() => resolve('timeout'), 3000);
  } catch { resolve('blocked'); }
});
log('worker ' + worker);
log('done');
</script></body></html>`;

const server = new McpServer({ name: 'toolwire-test-apps', version: '1.0.0' });
// Media the test made (a WAV and a WebM), returned as MCP audio and an embedded resource.
server.registerTool('media', {
  description: 'Returns the test clip and tone.',
  inputSchema: { audio: z.string(), video: z.string() },
}, async ({ audio, video }) => ({
  content: [
    { type: 'audio', data: readFileSync(audio).toString('base64'), mimeType: 'audio/wav' },
    { type: 'resource', resource: { uri: 'file:///clip.webm', mimeType: 'video/webm', blob: readFileSync(video).toString('base64') } },
  ],
}));
server.registerResource('test app', 'ui://test/app', { mimeType: 'text/html;profile=mcp-app' },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/html;profile=mcp-app', text: view }] }));
server.registerTool('show_app', {
  description: 'Shows the test app.',
  inputSchema: { api: z.string() },
  _meta: { ui: { resourceUri: 'ui://test/app' } },
}, async () => ({ content: [{ type: 'text', text: 'the app is shown' }], structuredContent: { count: 3 } }));
server.registerTool('app_only', {
  description: 'Only the app calls this.',
  inputSchema: { word: z.string() },
  _meta: { ui: { resourceUri: 'ui://test/app', visibility: ['app'] } },
}, async ({ word }) => ({ content: [{ type: 'text', text: `pong ${word}` }] }));
server.registerTool('model_only', {
  description: 'Apps may not call this.',
  _meta: { ui: { visibility: ['model'] } },
}, async () => ({ content: [{ type: 'text', text: 'should never run for an app' }] }));
await server.connect(new StdioServerTransport());
