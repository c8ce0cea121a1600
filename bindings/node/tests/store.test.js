// toolwire.Store on every backend this machine runs (SQLite + blob files always;
// Postgres + S3 when tests/services/start is up, and always in CI): results persisted
// with their media, a session loaded back identical, the model's view and readResult of
// it.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const {mkdtempSync} = require('node:fs');
const {tmpdir} = require('node:os');
const {join} = require('node:path');

const toolwire = require('toolwire');
const {FIXTURES, load, backends} = require('./helpers.js');

const IMAGE = load(join(FIXTURES, 'mcp', 'get-tiny-image.json'));

function results() {
  const image = toolwire.normalize(IMAGE, {tool: 'get-tiny-image', callId: 'c_img'});
  const log = Array.from({length: 300_000}, (_, i) => `line ${i}`).join('\n') + '\nFATAL: disk full';
  const big = toolwire.normalize({content: [{type: 'text', text: log}]}, {tool: 'logs', callId: 'c_log'});
  return [image, big];
}

async function rejected(promise) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof toolwire.ToolwireError, `not a ToolwireError: ${e}`);
    return e;
  }
  assert.fail('the promise was not rejected');
}

test('a session loads back identical with its media', async () => {
  for (const [name, where] of backends(join(mkdtempSync(join(tmpdir(), 'toolwire-node-')), 'data'))) {
    const store = await toolwire.Store.open(where);
    const session = await store.createSession({title: 'node ' + name});
    const [image, big] = results();
    const calls = [image, big].map((r) => ({id: r.callId, name: r.toolName, input: {}}));
    await store.append(session, {role: 'user', content: {text: 'look'}});
    await store.append(session, {role: 'assistant', content: {text: '', toolCalls: calls}});
    const stored = await store.persist(session, image);
    await store.persist(session, big);

    // The image went to the blob store; the row holds a reference.
    const source = stored.output[1].data.source;
    assert.ok('blob' in source && !('base64' in source), name);
    assert.deepEqual(await store.blob(source.blob), Buffer.from(IMAGE.content[1].data, 'base64'));

    // A second Store on the same place loads the session back as it was given.
    const again = await toolwire.Store.open(where);
    const messages = await again.load(session);
    assert.deepEqual(messages[0].content, {text: 'look'});
    const loaded = messages.filter((m) => m.role === 'tool_result').map((m) => m.content);
    assert.deepEqual(loaded[1], big, name);
    // The image result is as given, plus the store's record of the blob it now holds.
    const {resources, ...rest} = loaded[0];
    assert.deepEqual(rest, image, name);
    assert.deepEqual(resources, [{uri: source.blob, kind: 'image', mimeType: 'image/png', size: 4033}], name);
    assert.ok((await again.sessions({limit: 1000})).some((s) => s.id === session), name);
    // Without inline media the reference stays.
    const refs = await again.load(session, {inlineMedia: false});
    assert.deepEqual(refs[2].content, stored, name);

    // The request toolwire would send for it: the stored image read back from the blob
    // store, the log cut with a marker that Store.readResult follows.
    const text = JSON.stringify(await again.toModel(session, 'anthropic', {budget: 2_000}));
    assert.ok(text.includes(IMAGE.content[1].data), name);
    assert.ok(text.includes('read_result {\\"callId\\":\\"c_log\\"'), name);
    assert.ok((await again.readResult(session, 'c_log', {pattern: 'FATAL'})).includes('FATAL: disk full'), name);

    assert.equal((await rejected(again.readResult(session, 'c_nope'))).code, 'not_found');
    const e = await rejected(again.load('ses_missing'));
    assert.deepEqual([e.code, e.message], ['not_found', 'no session "ses_missing"']);
    assert.equal((await rejected(again.toModel('ses_missing', 'gemini'))).code, 'not_found');
  }
});

test('bad places and rows are errors, not crashes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolwire-node-'));
  let e = await rejected(toolwire.Store.open({databaseUrl: 'mysql://x', blobUrl: `file://${dir}`}));
  assert.equal(e.code, 'store');
  assert.ok(e.message.includes('mysql'), e.message);
  const store = await toolwire.Store.open({dataDir: join(dir, 'd')});
  const session = await store.createSession();
  e = thrown(() => store.append(session, {role: 'wizard', content: {}}));
  // A message that is not JSON is refused at the call; one that is no message, by the
  // promise.
  assert.equal(e, null);
  e = await rejected(store.append(session, {role: 'wizard', content: {}}));
  assert.ok(e.code === 'invalid_input' && e.message.startsWith('message: '), e.message);
  // A result pointing at a blob that is not stored is refused, not half-written.
  const dangling = toolwire.normalize(IMAGE, {callId: 'c_dangling'});
  dangling.output[1].data.source = {blob: 'blake3:' + '0'.repeat(64)};
  assert.equal((await rejected(store.persist(session, dangling))).code, 'store');
  assert.deepEqual(await store.load(session), []);
  assert.equal((await rejected(store.blob('../../etc/passwd'))).code, 'store');
  assert.throws(() => store.persist(session, {a: () => 1}), (err) => err instanceof toolwire.ToolwireError && err.message === 'result.a: not JSON: a value of type function');
});

function thrown(fn) {
  try {
    const p = fn();
    p.catch(() => {});
    return null;
  } catch (e) {
    return e;
  }
}
