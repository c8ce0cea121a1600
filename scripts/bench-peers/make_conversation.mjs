// make_conversation.mjs: writes a deterministic test conversation (the `convert` input format) for peers.mjs.
//
// Usage: node make_conversation.mjs <turns> <out.json>
// Each turn has 1 or 2 tool calls (alternating), each call ~1 KB of output text;
// every 7th call is an error result. The same <turns> always gives the same bytes.
import { writeFileSync } from 'node:fs';

const [turnsArg, out] = process.argv.slice(2);
const turns = Number(turnsArg);
if (!out || !Number.isInteger(turns) || turns < 1) {
  console.error('usage: node make_conversation.mjs <turns> <out.json>');
  process.exit(1);
}

// Small LCG so the output is reproducible without Math.random; its high bits (the low ones cycle fast).
let seed = 42;
const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) >>> 16;

const WORDS = ['fn', 'let', 'match', 'self', 'impl', 'struct', 'Result', 'Ok', 'Err', 'pub',
  'async', 'await', 'String', 'Vec', 'Option', 'None', 'Some', 'return', 'use', 'mod'];

// About `bytes` bytes of code-like lines.
function text(bytes) {
  const lines = [];
  let size = 0;
  for (let n = 1; size < bytes; n++) {
    const words = Array.from({ length: 4 + (next() % 8) }, () => WORDS[next() % WORDS.length]);
    const line = `${String(n).padStart(4)}  ${words.join(' ')};`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
}

const TOOLS = [
  (i) => ({ name: 'read_file', input: { path: `src/module_${i % 50}.rs` } }),
  (i) => ({ name: 'grep', input: { pattern: `fn handler_${i % 13}`, path: 'src/' } }),
  (i) => ({ name: 'run_command', input: { command: 'cargo check', cwd: `crates/c${i % 5}` } }),
];

let callNo = 0;
const conversation = { system: 'You are a careful coding assistant working in a Rust repository.', turns: [] };
for (let t = 0; t < turns; t++) {
  const calls = [];
  for (let c = 0; c < 1 + (t % 2); c++) {
    callNo++;
    const { name, input } = TOOLS[callNo % TOOLS.length](callNo);
    const isError = callNo % 7 === 0;
    calls.push({
      id: `call_${callNo}`,
      name,
      input,
      output: isError ? `error: ${name} failed\n${text(900)}` : text(1000),
      is_error: isError,
    });
  }
  conversation.turns.push({
    user: `Step ${t + 1}: please look at the next part of the code and tell me what to change.`,
    assistant: `I'll inspect that with ${calls.map((c) => c.name).join(' and ')}.`,
    calls,
  });
}
writeFileSync(out, JSON.stringify(conversation));
