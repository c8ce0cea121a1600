#!/usr/bin/env node
// Node `toolwire.normalize` beside its peer, the TypeScript MCP SDK's
// `CallToolResultSchema.parse` (zod), and beside the floors of its boundary.
//
// Run by scripts/bench (its `packages` workload, crates/toolwire-bench/src/packages.rs),
// which writes the payloads and reads the one JSON line this prints:
//
//   node bench.js SMALL.jsonl IMAGE.json ROUNDS SDK_TYPES_JS
//
// SMALL.jsonl holds one small MCP result per line and IMAGE.json one result with a 20 MB
// image: the payloads of the Rust rows (crates/toolwire-bench/src/payloads.rs), read with
// JSON.parse before any timing, so that both sides get the same objects (what an MCP
// client holds). SDK_TYPES_JS is the SDK's dist/cjs/types.js (tests/mcp's pin). Each
// figure is the best of ROUNDS, in milliseconds:
// - `small`: normalize of every small result; the peer's parse of the same; and
//   JSON.parse of each normalized result's JSON text (the least any value coming back from
//   native code costs, one half of the boundary's floor);
// - `image`: normalize of the image result; the peer's parse; and one copy of its base64
//   string each way (to UTF-8 bytes and back), the floor of a string that crosses into
//   Rust and back.
'use strict';
const {readFileSync} = require('node:fs');
const {join} = require('node:path');

const [smallPath, imagePath, roundsArg, sdkTypes] = process.argv.slice(2);
if (!sdkTypes) {
  console.error('usage: node bench.js SMALL.jsonl IMAGE.json ROUNDS SDK_TYPES_JS');
  process.exit(2);
}
// The package from this checkout (its index.js loads the addon napi build put beside it).
const toolwire = require(join(__dirname, 'index.js'));
const {CallToolResultSchema} = require(sdkTypes);

/** The least time of `rounds` runs of `fn`, in milliseconds. */
function best(fn, rounds) {
  let least = Infinity;
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint();
    fn();
    least = Math.min(least, Number(process.hrtime.bigint() - start) / 1e6);
  }
  return least;
}

const rounds = Number(roundsArg);
const small = readFileSync(smallPath, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
const image = JSON.parse(readFileSync(imagePath, 'utf8'));
const data = image.content.find((b) => b.type === 'image').data;
const texts = small.map((r) => JSON.stringify(toolwire.normalize(r)));

console.log(JSON.stringify({
  small: {
    n: small.length,
    ours_ms: best(() => small.map((r) => toolwire.normalize(r)), rounds),
    peer_ms: best(() => small.map((r) => CallToolResultSchema.parse(r)), rounds),
    parse_ms: best(() => texts.map((t) => JSON.parse(t)), rounds),
  },
  image: {
    chars: data.length,
    ours_ms: best(() => toolwire.normalize(image), rounds),
    peer_ms: best(() => CallToolResultSchema.parse(image), rounds),
    copy_ms: best(() => Buffer.from(data, 'utf8').toString('utf8'), rounds),
  },
}));
