#!/usr/bin/env node
// Node `toolwire.normalize` beside its peer, the TypeScript MCP SDK's
// `CallToolResultSchema.parse` (zod), on the payloads of scripts/bench
// (crates/toolwire-bench/src/payloads.rs): 10,000 small MCP text results, and one result
// with a 20 MB image. Both are given the same objects (what an MCP client holds). The
// boundary row: the same small calls beside JSON.parse of each result's JSON text, the
// least any JS value from Rust costs.
//
// Run with a release build installed (npm install ./bindings/node builds one) and the SDK
// from tests/mcp (npm ci --prefix tests/mcp): `node bindings/node/bench.js`.
'use strict';
const {join} = require('node:path');
const toolwire = require('toolwire');
const {CallToolResultSchema} = require(join(__dirname, '..', '..', 'tests', 'mcp', 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'cjs', 'types.js'));

function smallResults(n) {
  return Array.from({length: n}, (_, i) => ({content: [{type: 'text', text: `result ${i}: 3 files changed, 12 insertions(+)`}]}));
}

function imageResult(size) {
  // A seeded stream (xorshift), so every run hashes the same bytes.
  const png = Buffer.alloc(size);
  Buffer.from('\x89PNG\r\n\x1a\n', 'latin1').copy(png);
  let x = 1;
  for (let i = 8; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    png[i] = x & 0xff;
  }
  return {content: [{type: 'text', text: 'Here is the screenshot:'}, {type: 'image', data: png.toString('base64'), mimeType: 'image/png'}]};
}

function best(fn, repeat) {
  let min = Infinity;
  for (let i = 0; i < repeat; i++) {
    const start = process.hrtime.bigint();
    fn();
    min = Math.min(min, Number(process.hrtime.bigint() - start) / 1e6);
  }
  return min;
}

const row = (name, ours, peer) => console.log(`| ${name} | ${ours.toFixed(1)} ms | ${peer.toFixed(1)} ms | ${(ours / peer).toFixed(2)}x |`);

const small = smallResults(10_000);
const image = imageResult(20_000_000);
console.log('| workload | toolwire.normalize | CallToolResultSchema.parse | ratio |');
console.log('| --- | --- | --- | --- |');
row('10,000 small MCP results', best(() => small.map((r) => toolwire.normalize(r)), 5), best(() => small.map((r) => CallToolResultSchema.parse(r)), 5));
row('one 20 MB image result', best(() => toolwire.normalize(image), 5), best(() => CallToolResultSchema.parse(image), 5));
const text = small.map((r) => JSON.stringify(toolwire.normalize(r)));
const parse = best(() => text.map((t) => JSON.parse(t)), 5);
row('10,000 small results: normalize vs JSON.parse of its result', best(() => small.map((r) => toolwire.normalize(r)), 5), parse);
