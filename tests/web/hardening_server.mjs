// An MCP server whose app does what issue 24's probe did from inside the sandbox: the test
// drives it from the app's own frame, where `window.app` is the official app SDK's App,
// connected to the host (asking to open links, calling `echo` several times at once).
import { McpServer, StdioServerTransport, z, appSdkScript } from './app_sdk.mjs';

const view = `<!doctype html>
<html><head><meta charset="utf-8"><title>hardening app</title></head>
<body><p id="state">connecting</p>
<script type="module">${appSdkScript}</script>
<script type="module">
const { App } = window.__extApps;
const app = new App({ name: 'hardening-app', version: '1.0.0' });
await app.connect();
window.app = app;
document.getElementById('state').textContent = 'connected';
</script></body></html>`;

const server = new McpServer({ name: 'toolwire-hardening', version: '1.0.0' });
server.registerResource('hardening app', 'ui://hard/app', { mimeType: 'text/html;profile=mcp-app' },
  async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/html;profile=mcp-app', text: view }] }));
// Read-only: no approval stands between the call and its result, so the result event can
// reach the page before the POST that started the call has answered.
server.registerTool('show', {
  description: 'Shows the hardening app.',
  annotations: { readOnlyHint: true },
  _meta: { ui: { resourceUri: 'ui://hard/app' } },
}, async () => ({ content: [{ type: 'text', text: 'the app is shown' }] }));
server.registerTool('echo', {
  description: 'Answers at once.',
  inputSchema: { word: z.string() },
  annotations: { readOnlyHint: true },
  _meta: { ui: { visibility: ['app'] } },
}, async ({ word }) => ({ content: [{ type: 'text', text: `echo ${word}` }] }));
await server.connect(new StdioServerTransport());
