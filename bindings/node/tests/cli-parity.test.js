// The package and the `toolwire` binary agree byte for byte: the fixture corpus of the
// Rust tests (tests/fixtures, tests/hostile) normalized, rendered and validated, the
// schema, and a stored session's request body, each written as JSON by Node and printed
// by the CLI.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const {mkdtempSync, readFileSync, writeFileSync} = require('node:fs');
const {tmpdir} = require('node:os');
const {basename, dirname, join} = require('node:path');

const toolwire = require('toolwire');
const {FIXTURES, HOSTILE, corpus, load, cliPath, runCli, need} = require('./helpers.js');

/** JSON as the CLI prints it: pretty, two spaces, UTF-8 kept, a final newline. */
const dumps = (value) => JSON.stringify(value, null, 2) + '\n';

/** What the CLI's output escaping does to characters a terminal would act on (C1
 * controls, bidi overrides, invisible characters: toolwire_term's sanitize_json), so a
 * hostile payload's Node dump can be compared with the CLI's safe print. */
function escaped(text) {
  return text.replace(
    /[\u0080-\u009f\u061c\u200b-\u200f\u2028\u2029\u2060\ufeff\u202a-\u202e\u2066-\u2069]/g,
    (ch) => '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0'),
  );
}

/** The encoded session in a request body: its turns, without a system prompt. */
function sessionPart(body, provider) {
  const key = {anthropic: 'messages', 'openai-chat': 'messages', 'openai-responses': 'input', gemini: 'contents'}[provider];
  return JSON.stringify(body[key].filter((t) => !['system', 'developer'].includes(t.role)));
}

/** Node's JSON text is the CLI's byte for byte, but for one thing JavaScript cannot keep:
 * a float the CLI prints as `1.0` or `1.8446744073709552e19` is a number JSON.stringify
 * writes `1` or `18446744073709552000`. Where the texts differ, the CLI's must have such a
 * number, and its text read and written again by JavaScript must then be Node's byte for
 * byte. */
function sameJson(ours, cli, write = dumps) {
  if (ours === cli) return;
  assert.ok(/\d\.0\b|\de[-+]?\d/.test(cli), `not the CLI's JSON and no float to explain it:\n${ours}\n---\n${cli}`);
  assert.equal(ours, escaped(write(JSON.parse(cli))));
}

/** Whether JSON text has an integer JavaScript's numbers cannot hold exactly. */
const lossy = (text) => (text.match(/(?<![\w.])-?\d{16,}(?![\d.eE])/g) || []).some((n) => BigInt(n) > BigInt(Number.MAX_SAFE_INTEGER) || BigInt(n) < -BigInt(Number.MAX_SAFE_INTEGER));

const stem = (p) => basename(p, '.json');
const name = (p) => basename(dirname(p)) + '/' + stem(p);
// tests/hostile/deep_json.json nests 100,000 deep: the CLI refuses it as JSON, and so
// does JSON.parse's caller here; see "deep input is refused".
const CORPUS = corpus().filter((p) => stem(p) !== 'deep_json');

function nested(levels) {
  let value = [];
  for (let i = 0; i < levels - 1; i++) value = [value];
  return value;
}

test('the corpus is the Rust tests corpus', () => {
  const names = new Set(CORPUS.map(name));
  assert.ok([...names].filter((n) => !n.startsWith('hostile/')).length >= 16);
  for (const n of ['mcp/get-tiny-image', 'legacy/art-success', 'hostile/escapes_mcp']) assert.ok(names.has(n), n);
});

test('deep input is refused as the CLI refuses it', (t) => {
  const cli = cliPath();
  if (!cli) return need(t, 'the toolwire binary', 'cargo build -p toolwire, or set TOOLWIRE_BIN');
  const {err, code} = runCli(cli, ['normalize', join(HOSTILE, 'deep_json.json')]);
  assert.ok(code === 1 && err.includes('not JSON: recursion limit exceeded'), err);
  assert.throws(
    () => toolwire.normalize(nested(100_000)),
    (e) => e instanceof toolwire.ToolwireError && e.code === 'invalid_input' && e.message.includes('not JSON: nested 128 levels deep or more'),
  );
  // The same limit as the CLI's JSON reader: 127 levels pass, 128 do not.
  for (const [levels, ok] of [[127, true], [128, false]]) {
    const {code} = runCli(cli, ['normalize', '-'], JSON.stringify(nested(levels)));
    assert.equal(code === 0, ok, String(levels));
    let passed = true;
    try {
      toolwire.normalize(nested(levels));
    } catch (e) {
      assert.ok(e instanceof toolwire.ToolwireError);
      passed = false;
    }
    assert.equal(passed, ok, String(levels));
  }
});

for (const path of CORPUS) {
  test(`normalize prints the same JSON: ${name(path)}`, (t) => {
    const cli = cliPath();
    if (!cli) return need(t, 'the toolwire binary', 'cargo build -p toolwire, or set TOOLWIRE_BIN');
    // An integer past 2^53 in the file (hostile/size_lie's u64::MAX) is another number
    // once JSON.parse has read it: the CLI then gets the text Node can give.
    const exact = !lossy(readFileSync(path, 'utf8'));
    const input = exact ? [path] : ['-'];
    const stdin = exact ? undefined : JSON.stringify(load(path));
    const {out, err, code} = runCli(cli, ['normalize', ...input, '--tool', stem(path)], stdin);
    assert.equal(code, 0, err);
    const ours = toolwire.normalize(load(path), {tool: stem(path)});
    sameJson(escaped(dumps(ours)), out);
    const compact = runCli(cli, ['normalize', '--compact', ...input, '--tool', stem(path)], stdin);
    sameJson(escaped(JSON.stringify(ours)) + '\n', compact.out, (v) => JSON.stringify(v) + '\n');
  });

  test(`render and validate say what the CLI says: ${name(path)}`, (t) => {
    const cli = cliPath();
    if (!cli) return need(t, 'the toolwire binary', 'cargo build -p toolwire, or set TOOLWIRE_BIN');
    const result = toolwire.normalize(load(path), {tool: stem(path)});
    const file = join(mkdtempSync(join(tmpdir(), 'toolwire-node-')), 'result.json');
    writeFileSync(file, JSON.stringify(result));
    let run = runCli(cli, ['render', '--width', '80', file]);
    assert.equal(run.code, 0, run.err);
    assert.equal(toolwire.renderTerminal(result, {width: 80}), run.out);
    run = runCli(cli, ['validate', file]);
    assert.ok(run.code === 0 && run.out.startsWith('ok: '), run.err);
    assert.deepEqual(toolwire.validate(result), []);
  });
}

test('schema is the CLI\'s', (t) => {
  const cli = cliPath();
  if (!cli) return need(t, 'the toolwire binary', 'cargo build -p toolwire, or set TOOLWIRE_BIN');
  const {out, code} = runCli(cli, ['schema']);
  assert.equal(code, 0);
  assert.deepEqual(toolwire.schema(), JSON.parse(out));
  assert.equal(JSON.stringify(toolwire.schema(), null, 2), out.replace(/\n$/, ''));
});

for (const bad of [
  {callId: 1},
  {callId: 'c', toolName: 't', status: 'success', output: [{}]},
  {callId: 'c', toolName: 't', status: 'maybe', output: []},
  [1, 2],
]) {
  test(`bad input gets the CLI's message: ${JSON.stringify(bad)}`, (t) => {
    const cli = cliPath();
    if (!cli) return need(t, 'the toolwire binary', 'cargo build -p toolwire, or set TOOLWIRE_BIN');
    const {err, code} = runCli(cli, ['validate', '-'], JSON.stringify(bad));
    assert.equal(code, 1);
    let thrown;
    assert.throws(() => toolwire.validate(bad), (e) => (thrown = e) instanceof toolwire.ToolwireError);
    // The CLI names its input (<stdin>), the package its argument (result); the rest is
    // the same words.
    assert.equal(err, 'error: <stdin>: ' + thrown.message.replace(/^result: /, '') + '\n');
  });
}

test('violations are the CLI\'s lines', (t) => {
  const cli = cliPath();
  if (!cli) return need(t, 'the toolwire binary', 'cargo build -p toolwire, or set TOOLWIRE_BIN');
  const result = toolwire.normalize({content: [{type: 'text', text: 'x'}]});
  result.output[0].kind = 'Bad Kind';
  result.callId = '';
  const file = join(mkdtempSync(join(tmpdir(), 'toolwire-node-')), 'bad.json');
  writeFileSync(file, JSON.stringify(result));
  const {err, code} = runCli(cli, ['validate', file]);
  assert.equal(code, 1);
  assert.deepEqual(err.split('\n').filter(Boolean), toolwire.validate(result));
});

for (const provider of ['anthropic', 'openai-chat', 'openai-responses', 'gemini']) {
  test(`a stored session exports the same body: ${provider}`, async (t) => {
    const cli = cliPath();
    if (!cli) return need(t, 'the toolwire binary', 'cargo build -p toolwire, or set TOOLWIRE_BIN');
    const data = join(mkdtempSync(join(tmpdir(), 'toolwire-node-')), 'data');
    const store = await toolwire.Store.open({dataDir: data});
    const session = await store.createSession({title: 'parity'});
    const results = [
      toolwire.normalize(load(join(FIXTURES, 'mcp', 'get-tiny-image.json')), {callId: 'c_img'}),
      toolwire.normalize(load(join(FIXTURES, 'mcp', 'get-structured-content.json')), {callId: 'c_both'}),
      toolwire.normalize({content: [{type: 'text', text: 'no'}], isError: true}, {callId: 'c_err'}),
      toolwire.normalize({content: [{type: 'text', text: 'y'.repeat(200_000)}]}, {callId: 'c_big'}),
    ];
    const calls = results.map((r) => ({id: r.callId, name: r.toolName, input: {}}));
    await store.append(session, {role: 'user', content: {text: 'go'}});
    await store.append(session, {role: 'assistant', content: {text: '', toolCalls: calls}});
    for (const r of results) await store.persist(session, r);
    const {out, err, code} = runCli(cli, ['export', session, '--provider', provider, '--max-chars', '3000', '--data-dir', data]);
    assert.equal(code, 0, err);
    const body = await store.toModel(session, provider, {budget: 3000});
    // `toolwire export` is the agent's whole request; Store.toModel encodes the session
    // with the caller's options. The session's part must be the same, byte for byte.
    assert.equal(sessionPart(body, provider), sessionPart(JSON.parse(out), provider));
  });
}
