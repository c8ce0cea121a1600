// What the test MCP servers with apps share: the official TypeScript SDK (from tests/mcp)
// to serve over stdio, and the official app SDK (@modelcontextprotocol/ext-apps, from
// tests/web) as a script a view can inline, which sets `window.__extApps`.
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const sdk = join(here, '../mcp/node_modules/@modelcontextprotocol/sdk/dist/esm');
export const { McpServer } = await import(join(sdk, 'server/mcp.js'));
export const { StdioServerTransport } = await import(join(sdk, 'server/stdio.js'));
export const { z } = await import(join(here, '../mcp/node_modules/zod/index.js'));

// The app SDK's browser bundle, its final export turned into a global the view can use.
const bundle = readFileSync(join(here, 'node_modules/@modelcontextprotocol/ext-apps/dist/src/app-with-deps.js'), 'utf8');
const lastExport = bundle.lastIndexOf('export{');
const names = bundle.slice(lastExport + 'export{'.length, bundle.indexOf('}', lastExport)).split(',')
  .map((pair) => pair.trim().split(/\s+as\s+/)).map(([local, name]) => `${JSON.stringify(name || local)}:${local}`);
const sdkScript = `${bundle.slice(0, lastExport)}\nwindow.__extApps={${names.join(',')}};`;

/** The app SDK as the body of an inline `<script type="module">`. */
export const appSdkScript = sdkScript.replaceAll('</script', '<\\/script');
