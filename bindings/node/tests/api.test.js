// Each function of the toolwire package on real payloads: what it returns, and the
// ToolwireError (code and message) it throws for bad input.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const {join} = require('node:path');

const toolwire = require('toolwire');
const {FIXTURES, load} = require('./helpers.js');

const IMAGE = load(join(FIXTURES, 'mcp', 'get-tiny-image.json'));
const textResult = (text, extra = {}) => ({content: [{type: 'text', text}], ...extra});

/** The ToolwireError `fn` throws (failing the test when it throws none or another). */
function thrown(fn) {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof toolwire.ToolwireError, `not a ToolwireError: ${e}`);
    assert.ok(e instanceof Error);
    assert.equal(e.name, 'ToolwireError');
    return e;
  }
  assert.fail('no error was thrown');
}

test('normalize takes every payload shape', () => {
  // MCP 2025-06-18: content blocks beside structuredContent, both kept.
  const both = toolwire.normalize(
    {content: [{type: 'text', text: '{"temp": 21}'}], structuredContent: {temp: 21}},
    {tool: 'weather', callId: 'c1'},
  );
  assert.deepEqual([both.callId, both.toolName, both.status], ['c1', 'weather', 'success']);
  assert.ok(both.output.some((v) => JSON.stringify(v.data) === '{"temp":21}'), JSON.stringify(both));

  // MCP 2026-07-28: a result that asks for input is a suspension.
  const asking = toolwire.normalize(
    {
      resultType: 'input_required',
      inputRequests: {who: {method: 'elicitation/create', params: {message: 'Your name?', requestedSchema: {type: 'object'}}}},
      requestState: 'opaque-1',
    },
    {tool: 't', callId: 'c9'},
  );
  assert.equal(asking.status, 'suspended');
  assert.equal(asking.suspension.prompt, 'Your name?');

  // An MCP error, ART and golem-forge envelopes, plain values.
  const error = toolwire.normalize({content: [{type: 'text', text: 'boom'}], isError: true});
  assert.ok(error.status === 'error' && JSON.stringify(error.error).includes('boom'));
  const art = toolwire.normalize(load(join(FIXTURES, 'legacy', 'art-success.json')));
  assert.ok(art.status === 'success' && art.output.length);
  assert.equal(toolwire.normalize(load(join(FIXTURES, 'legacy', 'golem-diff.json'))).output[0].kind, 'diff');
  assert.equal(toolwire.normalize('plain text').output[0].data.content, 'plain text');
  assert.equal(toolwire.normalize(42).status, 'success');
  assert.ok(toolwire.normalize([1, 2]).output.length);

  // Names default as the CLI's: the payload's own, else tool / call_1.
  const plain = toolwire.normalize({x: 1});
  assert.deepEqual([plain.callId, plain.toolName], ['call_1', 'tool']);
  const own = toolwire.normalize({callId: 'k', toolName: 'n', status: 'success', output: []});
  assert.deepEqual([own.callId, own.toolName], ['k', 'n']);
});

test('normalize of an image keeps it an image and is idempotent', () => {
  const r = toolwire.normalize(IMAGE, {tool: 'get-tiny-image'});
  assert.deepEqual(r.output.map((v) => v.kind), ['text', 'image', 'text']);
  assert.equal(r.output[1].mimeType, 'image/png');
  assert.equal(r.output[1].data.source.base64, IMAGE.content[1].data);
  assert.deepEqual(toolwire.normalize(r), r);
  assert.deepEqual(toolwire.validate(r), []);
});

test('normalize refuses what is not JSON', () => {
  for (const [bad, says] of [
    [{a: () => 1}, 'raw.a: not JSON: a value of type function'],
    [NaN, 'raw: not JSON: NaN has no JSON form'],
    [{n: [Infinity]}, 'raw.n[0]: not JSON: inf has no JSON form'],
    [{n: [10n]}, 'raw.n[0]: not JSON: a value of type bigint'],
    [{s: Symbol('x')}, 'raw.s: not JSON: a value of type symbol'],
    [[undefined], 'raw[0]: not JSON: a value of type undefined'],
    [undefined, 'raw: not JSON: a value of type undefined'],
  ]) {
    const e = thrown(() => toolwire.normalize(bad));
    assert.equal(e.code, 'invalid_input');
    assert.equal(e.message, says);
  }
  // A property set to undefined is a property absent, as JSON.stringify has it.
  assert.deepEqual(toolwire.normalize({content: [{type: 'text', text: 'x'}], isError: undefined}), toolwire.normalize({content: [{type: 'text', text: 'x'}]}));
  // Whole numbers stay integers past 32 bits; others stay floats.
  const big = toolwire.normalize({structuredContent: {at: 1_732_800_000_000, t: 0.5}, content: []});
  assert.deepEqual(big.output.at(-1).data, {at: 1_732_800_000_000, t: 0.5});
  // An option of the wrong type is Node-API's error naming the type it wanted.
  assert.throws(() => toolwire.normalize({}, {tool: 7}), (e) => e instanceof Error && /String/.test(e.message));
});

test('plain data crosses as JSON text, and what is not plain is read value by value to the same result', () => {
  // The addon reads plain data through JSON.stringify (one crossing) and anything else one
  // value at a time (src/lib.rs `plain_json`): each case here takes the second way, and
  // must come out as the first way would make it, or as the value-by-value reader always did.
  const text = (t) => toolwire.normalize({content: [{type: 'text', text: t}]}).output[0].data.content;
  // A lone surrogate is escaped by JSON.stringify and refused by serde_json: read value by
  // value, it is the replacement character, as before.
  assert.equal(text('a\ud800b'), 'a\ufffdb');
  // The text way hands an all-ASCII result back as Latin-1 and any other as UTF-8: text in
  // Latin-1's upper half, past it and past the BMP comes back as it went.
  for (const t of ['plain ascii', 'café ÿ', 'naïve — 日本語', 'emoji 🧪 and \u0001 control']) {
    assert.equal(text(t), t);
  }
  // Past a mebibyte of strings, value by value; the text is whole either way.
  assert.equal(text('y'.repeat(2_000_000)).length, 2_000_000);
  // Objects that are not plain (a Date has a toJSON; a Map and a class instance are not
  // Object's) are read as their own enumerable properties: none here.
  class Point {
    constructor() {
      this.x = 1;
    }
  }
  const structured = (v) => toolwire.normalize({content: [], structuredContent: v}).output.at(-1).data;
  assert.deepEqual(structured({d: new Date(0), m: new Map([[1, 2]]), p: new Point()}), {d: {}, m: {}, p: {x: 1}});
  // An object without a prototype is plain data.
  assert.deepEqual(structured(Object.assign(Object.create(null), {a: [1, 'two', null, true]})), {a: [1, 'two', null, true]});
  // A whole number past 2^53 is a float, as the value-by-value reader made it.
  assert.equal(structured({n: 2 ** 60}).n, 2 ** 60);
});

test('a result past a mebibyte of strings comes back value by value, as JSON.parse makes it', () => {
  // Past PLAIN_MAX_CHARS the addon makes its result one value at a time (src/js_value.rs)
  // rather than as JSON text; it must give what the text way gives: the same keys in the
  // same order, `__proto__` an own key (defined, not assigned), numbers and text alike.
  const structured = JSON.parse('{"__proto__": {"polluted": true}, "10": "ten", "b": [1, -2.5, 1e300, null, true, "é ✓ 😀"], "a": {"x": {}}}');
  const payload = (pad) => ({
    content: [{type: 'text', text: pad}, {type: 'image', data: IMAGE.content[1].data, mimeType: 'image/png'}],
    structuredContent: structured,
  });
  const small = toolwire.normalize(payload('p'));
  const big = toolwire.normalize(payload('p'.repeat(1_500_000)));
  assert.equal(big.output[0].data.content.length, 1_500_000);
  big.output[0].data.content = 'p';
  assert.deepEqual(big, small);
  assert.equal(JSON.stringify(big), JSON.stringify(small));
  const data = big.output.at(-1).data;
  assert.equal(Object.getPrototypeOf(data), Object.prototype);
  assert.ok(Object.hasOwn(data, '__proto__'));
  assert.deepEqual(Object.keys(data), ['10', '__proto__', 'b', 'a']);
  assert.equal({}.polluted, undefined);
  assert.equal(Object.getPrototypeOf(big), Object.prototype);
  assert.ok(Array.isArray(big.output));
  // toModel of such a result is made the same way.
  big.output[0].data.content = 'p'.repeat(1_500_000);
  const body = toolwire.toModel([big], 'anthropic');
  assert.equal(Object.getPrototypeOf(body), Object.prototype);
  assert.deepEqual(JSON.parse(JSON.stringify(body)), body);
});

test('validate lists violations and throws on what is no result', () => {
  const r = toolwire.normalize(textResult('hi'));
  r.output[0].kind = 'Not A Kind';
  r.callId = '';
  const lines = toolwire.validate(r);
  assert.ok(lines.length >= 2, lines);
  assert.ok(lines.some((l) => l.startsWith('callId')), lines);
  assert.ok(lines.some((l) => l.startsWith('output[0].kind')), lines);
  const e = thrown(() => toolwire.validate({callId: 'c', toolName: 't', status: 'success', output: [{}]}));
  assert.equal(e.code, 'invalid_input');
  assert.ok(e.message.startsWith('result: output[0]'), e.message);
  thrown(() => toolwire.validate('no result'));
});

test('schema is the wire format schema', () => {
  const s = toolwire.schema();
  assert.equal(s.$schema, 'https://json-schema.org/draft/2020-12/schema');
  for (const k of ['callId', 'toolName', 'status', 'output']) assert.ok(k in s.properties, k);
});

test('renderTerminal draws within the width and colours on request', () => {
  const r = toolwire.normalize(load(join(FIXTURES, 'legacy', 'golem-diff.json')));
  const plain = toolwire.renderTerminal(r, {width: 40});
  assert.ok(plain && !plain.includes('\x1b'));
  for (const line of plain.split('\n')) assert.ok([...line].length <= 40, line);
  assert.ok(toolwire.renderTerminal(r, {width: 40, color: true}).includes('\x1b['));
  const image = toolwire.renderTerminal(toolwire.normalize(IMAGE), {width: 60});
  assert.ok(image.includes('[image image/png 20×20'), image);
  const e = thrown(() => toolwire.renderTerminal(7));
  assert.equal(e.code, 'render');
  assert.ok(e.message.includes('found a number'), e.message);
});

function twoMbLog() {
  const lines = Array.from({length: 100_000}, (_, i) => `line ${i}: all well`);
  lines[77_777] = 'line 77777: FATAL disk full';
  const text = lines.join('\n');
  assert.ok(text.length > 2_000_000);
  return text;
}

test('toModel pairs, cuts with a marker, and readResult follows it', () => {
  const log = twoMbLog();
  const big = toolwire.normalize(textResult(log), {tool: 'logs', callId: 'c_log'});
  const image = toolwire.normalize(IMAGE, {tool: 'get-tiny-image', callId: 'c_img'});
  const [body, notes] = toolwire.toModel([image, big], 'anthropic', {budget: 5_000, notes: true});
  assert.equal(body.model, 'claude-sonnet-4-5');
  const [calls, results] = body.messages;
  assert.deepEqual(calls.content.map((c) => c.id), ['c_img', 'c_log']);
  const byId = Object.fromEntries(results.content.map((r) => [r.tool_use_id, r]));
  assert.deepEqual(byId.c_img.content.map((b) => b.type), ['text', 'image', 'text']);
  assert.equal(byId.c_img.content[1].source.data, IMAGE.content[1].data);
  const cut = JSON.stringify(byId.c_log.content);
  assert.ok(cut.length < 10_000);
  assert.ok(cut.includes('read_result {\\"callId\\":\\"c_log\\"'), cut.slice(-600));
  assert.ok(notes.some((n) => n.code && n.callId === 'c_log'), JSON.stringify(notes));

  // The marker's call reads on from exactly where the model's view stopped.
  let marker = cut.slice(cut.indexOf('read_result {') + 'read_result '.length);
  const call = JSON.parse(marker.slice(0, marker.indexOf('}') + 1).replaceAll('\\"', '"'));
  const page = toolwire.readResult(big, {part: call.part, offset: call.offset, limit: 100});
  assert.ok(page.startsWith(log.slice(call.offset, call.offset + 20)), page);
  assert.ok(toolwire.readResult(big, {pattern: 'FATAL'}).includes('line 77777: FATAL disk full'));
});

test('toModel routes media per model and takes conversations', () => {
  const image = toolwire.normalize(IMAGE, {tool: 'get-tiny-image', callId: 'c_img'});
  const data = IMAGE.content[1].data;
  const chat = toolwire.toModel([image], 'openai-chat').messages;
  assert.deepEqual(chat.map((m) => m.role), ['assistant', 'tool', 'user']);
  assert.ok(chat[1].content.includes('attached in the next user message'));
  assert.equal(chat[2].content[1].image_url.url, 'data:image/png;base64,' + data);
  const responses = toolwire.toModel([image], 'openai-responses').input[1].output;
  assert.deepEqual(responses[1], {type: 'input_image', image_url: 'data:image/png;base64,' + data, detail: 'auto'});
  const gemini = toolwire.toModel([image], 'gemini').contents[1].parts[0];
  assert.equal(gemini.functionResponse.parts[0].inlineData.data, data);
  // A format no provider takes becomes a described placeholder, not bytes.
  const tiff = toolwire.normalize(
    {content: [{type: 'image', data: Buffer.concat([Buffer.from('II*\0', 'latin1'), Buffer.alloc(64)]).toString('base64'), mimeType: 'image/tiff'}]},
    {callId: 'c_tiff'},
  );
  const [body, notes] = toolwire.toModel([tiff], 'anthropic', {notes: true});
  assert.ok(JSON.stringify(body).includes('image/tiff') && !JSON.stringify(body).includes('"type":"image"'));
  assert.ok(notes.some((n) => n.callId === 'c_tiff'));

  const conversation = [
    {role: 'user', content: {text: 'show me'}},
    {role: 'assistant', content: {text: '', toolCalls: [{id: 'c_img', name: 'get-tiny-image', input: {}}]}},
    {role: 'tool_result', content: image},
    // An orphan result (no call made it) is dropped, and a note says so.
    {role: 'tool_result', content: toolwire.normalize('late', {callId: 'c_orphan'})},
  ];
  for (const provider of ['anthropic', 'openai-chat', 'openai-responses', 'gemini']) {
    const [body, notes] = toolwire.toModel(conversation, provider, {system: 'Be brief.', notes: true});
    assert.ok(!JSON.stringify(body).includes('c_orphan'), provider);
    assert.ok(notes.some((n) => n.callId === 'c_orphan'), provider);
  }
});

test('toModel reports bad input as the CLI does', () => {
  let e = thrown(() => toolwire.toModel([], 'bedrock'));
  assert.equal(e.code, 'invalid_input');
  assert.equal(e.message, 'unknown provider `bedrock`; expected anthropic, openai-chat, openai-responses or gemini');
  e = thrown(() => toolwire.toModel([{callId: 'c'}], 'anthropic'));
  assert.ok(e.message.startsWith('results: [0]'), e.message);
  e = thrown(() => toolwire.toModel('text', 'anthropic'));
  assert.ok(e.message.includes('found a string'), e.message);
  e = thrown(() => toolwire.toModel([], 'anthropic', {budget: {maxChars: 'many'}}));
  assert.ok(e.message.startsWith('budget: maxChars: invalid type'), e.message);
});

test('readResult errors say how to ask again', () => {
  const r = toolwire.normalize(IMAGE);
  for (const [options, says] of [
    [{part: 9}, 'part 9 is out of range: the result has 3 output values'],
    [{part: 1}, 'part 1 is image'],
    [{pattern: '[z-a]'}, 'is not a regular expression'],
    [{pointer: '/x'}, 'part 0 is text, not JSON, so a pointer cannot go into it'],
  ]) {
    const e = thrown(() => toolwire.readResult(r, options));
    assert.equal(e.code, 'invalid_input');
    assert.ok(e.message.includes(says), e.message);
  }
  const report = toolwire.normalize({checks: [{name: 'disk', ok: false}]});
  assert.ok(thrown(() => toolwire.readResult(report, {pointer: 'x'})).message.includes('is not a JSON pointer'));
  assert.equal(toolwire.readResult(report, {pointer: '/checks/0/name'}), 'disk');
});

test('the browser renderer ships as toolwire/render', async () => {
  // The module loads in Node too (it touches the DOM only when it renders); its own tests
  // run it in Chromium (tests/web).
  const render = await import('toolwire/render');
  for (const name of ['renderResult', 'renderValue', 'registerRenderer']) assert.equal(typeof render[name], 'function', name);
  assert.ok(require.resolve('toolwire/render.css').endsWith('toolwire-render.css'));
});

test('a value that shares itself is refused, not walked without end', () => {
  // 60 levels of {a: o, b: o}: within the depth limit, but 2^60 values when walked as a
  // tree. The walk stops at the value budget instead of running for ever.
  let shared = {};
  for (let i = 0; i < 60; i++) shared = {a: shared, b: shared};
  const e = thrown(() => toolwire.normalize(shared));
  assert.equal(e.code, 'invalid_input');
  assert.ok(e.message.endsWith('not JSON: more than 4000000 values'), e.message.slice(-200));
  // A cycle is refused by the depth limit.
  const cycle = {};
  cycle.self = cycle;
  assert.ok(thrown(() => toolwire.validate(cycle)).message.endsWith('not JSON: nested 128 levels deep or more'));
});

test('ES modules import every function and the error class by name', async () => {
  const esm = await import('toolwire');
  for (const name of ['normalize', 'validate', 'toModel', 'readResult', 'renderTerminal', 'schema', 'Store', 'ToolwireError']) {
    assert.equal(esm[name], toolwire[name], name);
    assert.ok(esm[name], name);
  }
});
