// peers.mjs: times the Node.js peers (MCP TypeScript SDK, Vercel AI SDK) on the work toolwire does, for scripts/bench.
//
//   node peers.mjs parse   <file.json|file.jsonl> <rounds>
//   node peers.mjs persist <file.json> <dir> <rounds>
//   node peers.mjs convert <conversation.json> <anthropic|openai-chat|openai-responses|gemini> <rounds>
//
// Each prints one JSON line {"ms", "rounds", "peak_rss_kb", ...extra} and exits 0; on error the message goes
// to stderr and the exit code is 1. Inputs are read before timing; one untimed warm-up round runs first, then
// `rounds` timed rounds, and "ms" is the fastest of them (PEERS_NO_WARMUP=1 skips the warm-up). See README.md for what each timed path contains.
import { createHash } from 'node:crypto';
import {
  closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync, writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { jsonSchema, tool } from 'ai';
// The three steps generateText runs before model.doGenerate; `ai/internal` is the package's exported
// entry point for them (see README.md for why we call them rather than generateText itself).
import { convertToLanguageModelPrompt, prepareTools, standardizePrompt } from 'ai/internal';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createGoogleGenerativeAI } from '@ai-sdk/google';

// Nothing but the result line may reach stdout.
globalThis.AI_SDK_LOG_WARNINGS = false;

const elapsedMs = (from, to) => Number(to - from) / 1e6;

/** Runs `round` once untimed, then `rounds` times; each call returns its own elapsed ms. */
async function best(rounds, round) {
  // A whole-process figure (scripts/bench times the process) wants the work done once.
  if (!process.env.PEERS_NO_WARMUP) await round();
  let min = Infinity;
  for (let i = 0; i < rounds; i++) min = Math.min(min, await round());
  return min;
}

function report(ms, rounds, extra) {
  const peak_rss_kb = process.resourceUsage().maxRSS; // kilobytes on Linux
  process.stdout.write(JSON.stringify({ ms, rounds, peak_rss_kb, ...extra }) + '\n');
}

function roundsArg(s) {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1) throw new Error(`rounds must be a positive integer, got ${s}`);
  return n;
}

// ---- parse: bytes -> string -> JSON.parse -> CallToolResultSchema.parse, per document ----

async function parse([file, roundsS]) {
  if (!file) throw new Error('usage: parse <file.json|file.jsonl> <rounds>');
  const rounds = roundsArg(roundsS);
  const buf = readFileSync(file);
  const jsonl = file.endsWith('.jsonl'); // one CallToolResult per line; otherwise one document
  let docs = 0;
  const ms = await best(rounds, () => {
    const t0 = process.hrtime.bigint();
    const text = buf.toString('utf8');
    let n = 0;
    if (jsonl) {
      for (const line of text.split('\n')) {
        if (line.length === 0) continue;
        CallToolResultSchema.parse(JSON.parse(line));
        n++;
      }
    } else {
      CallToolResultSchema.parse(JSON.parse(text));
      n = 1;
    }
    const t1 = process.hrtime.bigint();
    docs = n;
    return elapsedMs(t0, t1);
  });
  report(ms, rounds, { docs });
}

// ---- persist: parse, then per image/audio item base64-decode, hash, write+fsync a temp file, rename ----

// Pure-JS blake3 (@noble/hashes) hashes ~30 MB/s here against ~1.5 GB/s for node:crypto sha256
// (OpenSSL), so blake3 would time the JS hash rather than storage; sha256 is what a Node store would use.
const HASH = 'sha256';

function writeAll(fd, bytes) {
  for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
}

async function persist([file, dir, roundsS]) {
  if (!file || !dir) throw new Error('usage: persist <file.json> <dir> <rounds>');
  const rounds = roundsArg(roundsS);
  const buf = readFileSync(file);
  mkdirSync(dir, { recursive: true });
  let blobs = 0;
  let blobBytes = 0;
  const ms = await best(rounds, () => {
    const t0 = process.hrtime.bigint();
    const result = CallToolResultSchema.parse(JSON.parse(buf.toString('utf8')));
    let n = 0;
    let size = 0;
    for (const item of result.content) {
      if (item.type !== 'image' && item.type !== 'audio') continue;
      const bytes = Buffer.from(item.data, 'base64');
      const hex = createHash(HASH).update(bytes).digest('hex');
      const tmp = join(dir, `${hex}.tmp`);
      const fd = openSync(tmp, 'w');
      writeAll(fd, bytes);
      fsyncSync(fd);
      closeSync(fd);
      renameSync(tmp, join(dir, hex)); // content addressed: same bytes, same name
      n++;
      size += bytes.length;
    }
    // toolwire's local store fsyncs the directory too, so the rename itself survives power loss.
    const dfd = openSync(dir, 'r');
    fsyncSync(dfd);
    closeSync(dfd);
    const t1 = process.hrtime.bigint();
    blobs = n;
    blobBytes = size;
    return elapsedMs(t0, t1);
  });
  report(ms, rounds, { blobs, blob_bytes: blobBytes, hash: HASH });
}

// ---- convert: AI SDK ModelMessage[] -> provider HTTP request body, with fetch captured ----

/** The conversation file as AI SDK v7 ModelMessage[] (user, assistant text + tool calls, tool results). */
function toModelMessages(conv) {
  const messages = [];
  for (const turn of conv.turns) {
    messages.push({ role: 'user', content: turn.user });
    const calls = turn.calls ?? [];
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: turn.assistant },
        ...calls.map((c) => ({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.input })),
      ],
    });
    if (calls.length > 0) {
      messages.push({
        role: 'tool',
        content: calls.map((c) => ({
          type: 'tool-result',
          toolCallId: c.id,
          toolName: c.name,
          output: { type: c.is_error ? 'error-text' : 'text', value: c.output },
        })),
      });
    }
  }
  return messages;
}

// Smallest responses each provider's response schema accepts; only parsed after timing stops.
const CANNED = {
  anthropic: {
    id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
    content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  },
  'openai-chat': {
    id: 'chatcmpl-1', object: 'chat.completion', created: 0, model: 'gpt-4.1',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  },
  'openai-responses': {
    id: 'resp_1', object: 'response', created_at: 0, status: 'completed', model: 'gpt-4.1',
    output: [{
      type: 'message', id: 'msg_1', role: 'assistant', status: 'completed',
      content: [{ type: 'output_text', text: 'ok', annotations: [] }],
    }],
    usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
  },
  gemini: {
    candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
  },
};

const MODELS = {
  anthropic: (fetch) => createAnthropic({ apiKey: 'x', fetch })('claude-sonnet-4-5'),
  'openai-chat': (fetch) => createOpenAI({ apiKey: 'x', fetch }).chat('gpt-4.1'),
  'openai-responses': (fetch) => createOpenAI({ apiKey: 'x', fetch }).responses('gpt-4.1'),
  gemini: (fetch) => createGoogleGenerativeAI({ apiKey: 'x', fetch })('gemini-2.5-pro'),
};

async function convert([file, provider, roundsS]) {
  if (!file || !MODELS[provider]) {
    throw new Error(`usage: convert <conversation.json> <${Object.keys(MODELS).join('|')}> <rounds>`);
  }
  const rounds = roundsArg(roundsS);
  const conv = JSON.parse(readFileSync(file, 'utf8'));
  const messages = toModelMessages(conv);
  // Declare every tool the conversation uses, with a trivial schema (providers send tool definitions).
  const names = [...new Set(conv.turns.flatMap((t) => (t.calls ?? []).map((c) => c.name)))];
  const tools = Object.fromEntries(names.map((name) => [name, tool({
    description: `The ${name} tool.`,
    inputSchema: jsonSchema({ type: 'object', properties: {}, additionalProperties: true }),
  })]));

  // The fetch the provider calls with the finished body: timing stops here, before any response work.
  let body = '';
  let capturedAt = 0n;
  const cannedText = JSON.stringify(CANNED[provider]);
  const captureFetch = async (_url, init) => {
    capturedAt = process.hrtime.bigint();
    body = init.body;
    return new Response(cannedText, { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const model = MODELS[provider](captureFetch);
  const providerName = model.provider.split('.')[0];

  const ms = await best(rounds, async () => {
    capturedAt = 0n;
    const t0 = process.hrtime.bigint();
    // What generateText does up to the HTTP request, minus its telemetry/callback/step bookkeeping:
    const prompt = await standardizePrompt({ instructions: conv.system, messages });
    const lmTools = await prepareTools({ tools });
    const lmPrompt = await convertToLanguageModelPrompt({
      prompt, supportedUrls: await model.supportedUrls, download: undefined, provider: providerName,
    });
    // Provider-specific conversion (getArgs) + JSON.stringify of the body + our fetch.
    await model.doGenerate({ prompt: lmPrompt, tools: lmTools, toolChoice: { type: 'auto' } });
    if (capturedAt === 0n) throw new Error('the provider never called fetch');
    return elapsedMs(t0, capturedAt);
  });
  // Optional, for checking the request by eye or diffing it against toolwire's: PEERS_DUMP_BODY=<file>.
  if (process.env.PEERS_DUMP_BODY) writeFileSync(process.env.PEERS_DUMP_BODY, body);
  report(ms, rounds, { body_bytes: Buffer.byteLength(body), provider, messages: messages.length });
}

const COMMANDS = { parse, persist, convert };

const [cmd, ...args] = process.argv.slice(2);
try {
  if (!COMMANDS[cmd]) throw new Error(`usage: node peers.mjs <${Object.keys(COMMANDS).join('|')}> ...`);
  await COMMANDS[cmd](args);
} catch (e) {
  process.stderr.write(`${e?.message ?? e}\n`);
  process.exitCode = 1;
}
