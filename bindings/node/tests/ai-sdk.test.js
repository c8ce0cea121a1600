// The Vercel AI SDK 7 with toolwire as its MCP tools' `toModelOutput`: the SDK's mock
// language model calls four tools whose results are MCP CallToolResults (an image, text
// beside structuredContent, an error, 2 MB of text); toolwire turns each into what the
// model sees. The conversation then goes through the SDK's real Anthropic, OpenAI
// Responses and Google providers, pointed at a local HTTP server standing in for each,
// and the test checks the request body that server receives: the image an image, both
// channels, the error flagged, the log cut with a marker that readResult follows.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const {createServer} = require('node:http');
const {join} = require('node:path');

const toolwire = require('toolwire');
const {FIXTURES, load} = require('./helpers.js');

const IMAGE = load(join(FIXTURES, 'mcp', 'get-tiny-image.json'));
const IMAGE_B64 = IMAGE.content[1].data;
const BOTH = {content: [{type: 'text', text: 'It is -3 °C in Oslo.'}], structuredContent: {city: 'Oslo', tempC: -3}};
const ERROR = {content: [{type: 'text', text: 'permission denied: /etc/shadow'}], isError: true};
const BIG_TEXT = Array.from({length: 110_000}, (_, i) => `line ${String(i).padStart(6, '0')}: ${i === 77_777 ? 'FATAL disk full' : 'all well'}`).join('\n');
const MCP_TOOLS = {get_image: IMAGE, get_weather: BOTH, read_secret: ERROR, get_logs: {content: [{type: 'text', text: BIG_TEXT}]}};
// Characters of one result a model sees; the 2 MB log is cut to this.
const BUDGET = 4_000;

/** toolwire as a tool's `toModelOutput`: the MCP result normalized and cut to the budget,
 * as the content parts of its model view (text, images), or error text when it failed.
 * Each AI SDK provider then encodes those parts for its own API. */
function toolwireOutput({toolCallId, output}, toolName) {
  const result = toolwire.normalize(output, {tool: toolName, callId: toolCallId});
  const body = toolwire.toModel([result], 'anthropic', {budget: BUDGET});
  const [block] = body.messages[1].content;
  const parts = block.content.map((b) =>
    b.type === 'image'
      ? {type: 'file', mediaType: b.source.media_type, data: {type: 'data', data: b.source.data}}
      : {type: 'text', text: b.text},
  );
  if (block.is_error) return {type: 'error-text', value: parts.map((p) => p.text ?? '').join('\n')};
  return {type: 'content', value: parts};
}

/** The four MCP tools, each returning its recorded CallToolResult. */
function mcpTools(ai) {
  return Object.fromEntries(
    Object.entries(MCP_TOOLS).map(([name, raw]) => [
      name,
      ai.tool({
        description: `MCP tool ${name}`,
        inputSchema: ai.jsonSchema({type: 'object', properties: {}}),
        execute: async () => raw,
        toModelOutput: (options) => toolwireOutput(options, name),
      }),
    ]),
  );
}

/** A loopback server that records each request body and answers with `reply`. */
async function stub(reply) {
  const bodies = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      bodies.push({url: req.url, body});
      const answer = JSON.stringify(reply(body));
      res.writeHead(200, {'content-type': 'application/json'}).end(answer);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {bodies, url: `http://127.0.0.1:${server.address().port}`, close: () => server.close()};
}

const USAGE = {inputTokens: {total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0}, outputTokens: {total: 1, text: 1, reasoning: 0}};

/** The messages of a run in which the SDK's mock model called the four tools. */
async function conversation(ai, mock) {
  const calls = Object.keys(MCP_TOOLS).map((name, i) => ({type: 'tool-call', toolCallId: `call_${i}_${name}`, toolName: name, input: '{}'}));
  const model = new mock.MockLanguageModelV4({
    doGenerate: [
      {content: calls, finishReason: {unified: 'tool-calls', raw: undefined}, usage: USAGE, warnings: []},
      {content: [{type: 'text', text: 'done'}], finishReason: {unified: 'stop', raw: undefined}, usage: USAGE, warnings: []},
    ],
  });
  const run = await ai.generateText({model, tools: mcpTools(ai), prompt: 'Check the machine.', stopWhen: ai.stepCountIs(2)});
  // The user's turn, then the first step's messages: the model's calls and the tools'
  // results as toModelOutput made them.
  const [first] = run.steps;
  assert.deepEqual(first.response.messages.map((m) => m.role), ['assistant', 'tool']);
  return [{role: 'user', content: 'Check the machine.'}, ...first.response.messages];
}

/** The marker's read_result call in a model's view, followed with readResult. */
function followMarker(text, raw, callId) {
  const at = text.indexOf('read_result {');
  assert.ok(at >= 0, 'no read_result marker: ' + text.slice(-400));
  const tail = text.slice(at + 'read_result '.length);
  const call = JSON.parse(tail.slice(0, tail.indexOf('}') + 1));
  assert.equal(call.callId, callId);
  const full = toolwire.normalize(raw, {tool: 'get_logs', callId});
  assert.ok(toolwire.readResult(full, {pattern: 'FATAL'}).includes('line 077777: FATAL disk full'));
  const page = toolwire.readResult(full, {part: call.part ?? 0, offset: call.offset, limit: 50});
  assert.ok(page.startsWith(BIG_TEXT.slice(call.offset, call.offset + 20)), page);
}

async function sdk() {
  return {
    ai: await import('ai'),
    mock: await import('ai/test'),
    anthropic: await import('@ai-sdk/anthropic'),
    openai: await import('@ai-sdk/openai'),
    google: await import('@ai-sdk/google'),
  };
}

test('Anthropic: the request keeps the image, both channels, the error flag and the marker', async () => {
  const {ai, mock, anthropic} = await sdk();
  const server = await stub((body) => ({
    id: 'msg_1', type: 'message', role: 'assistant', model: body.model,
    content: [{type: 'text', text: 'ok'}], stop_reason: 'end_turn', stop_sequence: null,
    usage: {input_tokens: 1, output_tokens: 1},
  }));
  try {
    const provider = anthropic.createAnthropic({baseURL: server.url + '/v1', apiKey: 'test'});
    await ai.generateText({model: provider('claude-sonnet-4-5'), messages: await conversation(ai, mock)});
    const [{url, body}] = server.bodies;
    assert.equal(url, '/v1/messages');
    const results = body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_result');
    const byId = Object.fromEntries(results.map((r) => [r.tool_use_id.replace(/^call_\d_/, ''), r]));
    const image = byId.get_image.content.find((b) => b.type === 'image');
    assert.deepEqual(image.source, {type: 'base64', media_type: 'image/png', data: IMAGE_B64});
    const weather = JSON.stringify(byId.get_weather.content);
    assert.ok(weather.includes('It is -3 °C in Oslo.') && weather.includes('{\\"city\\":\\"Oslo\\",\\"tempC\\":-3}'), weather);
    assert.equal(byId.read_secret.is_error, true);
    assert.ok(JSON.stringify(byId.read_secret.content).includes('permission denied: /etc/shadow'));
    const logs = byId.get_logs.content.map((b) => b.text).join('');
    assert.ok(logs.length < 2 * BUDGET, String(logs.length));
    followMarker(logs, MCP_TOOLS.get_logs, byId.get_logs.tool_use_id);
  } finally {
    server.close();
  }
});

test('OpenAI Responses: the request keeps the image, both channels, the error and the marker', async () => {
  const {ai, mock, openai} = await sdk();
  const server = await stub((body) => ({
    id: 'resp_1', object: 'response', created_at: 1, model: body.model, status: 'completed', incomplete_details: null,
    output: [{type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{type: 'output_text', text: 'ok', annotations: []}]}],
    usage: {input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: {cached_tokens: 0}, output_tokens_details: {reasoning_tokens: 0}},
  }));
  try {
    const provider = openai.createOpenAI({baseURL: server.url + '/v1', apiKey: 'test'});
    await ai.generateText({model: provider.responses('gpt-5'), messages: await conversation(ai, mock)});
    const [{url, body}] = server.bodies;
    assert.equal(url, '/v1/responses');
    const outputs = Object.fromEntries(body.input.filter((i) => i.type === 'function_call_output').map((o) => [o.call_id.replace(/^call_\d_/, ''), o]));
    const image = JSON.stringify(outputs.get_image.output);
    assert.ok(image.includes('input_image') && image.includes(`data:image/png;base64,${IMAGE_B64}`), image.slice(0, 300));
    const weather = JSON.stringify(outputs.get_weather.output);
    assert.ok(weather.includes('It is -3 °C in Oslo.') && weather.includes('{\\"city\\":\\"Oslo\\",\\"tempC\\":-3}'), weather);
    // The SDK writes an error-text output as {"error": …}, which the model reads as one.
    assert.deepEqual(JSON.parse(outputs.read_secret.output), {error: 'permission denied: /etc/shadow'});
    const logs = outputs.get_logs.output.map((p) => p.text).join('');
    assert.ok(logs.length < 2 * BUDGET, String(logs.length));
    followMarker(logs, MCP_TOOLS.get_logs, outputs.get_logs.call_id);
  } finally {
    server.close();
  }
});

test('Google: the request keeps the image, both channels, the error and the marker', async () => {
  const {ai, mock, google} = await sdk();
  const server = await stub(() => ({
    candidates: [{content: {role: 'model', parts: [{text: 'ok'}]}, finishReason: 'STOP', index: 0}],
    usageMetadata: {promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2},
  }));
  try {
    const provider = google.createGoogleGenerativeAI({baseURL: server.url + '/v1beta', apiKey: 'test'});
    await ai.generateText({model: provider('gemini-2.5-flash'), messages: await conversation(ai, mock)});
    const [{url, body}] = server.bodies;
    assert.equal(url, '/v1beta/models/gemini-2.5-flash:generateContent');
    const text = JSON.stringify(body.contents);
    const inline = body.contents.flatMap((c) => c.parts).flatMap((p) => [p.inlineData, ...(p.functionResponse?.parts ?? []).map((q) => q.inlineData)]).filter(Boolean);
    assert.ok(inline.some((d) => d.data === IMAGE_B64 && d.mimeType === 'image/png'), text.slice(0, 600));
    assert.ok(text.includes('It is -3 °C in Oslo.') && text.includes('{\\"city\\":\\"Oslo\\",\\"tempC\\":-3}'), text.slice(0, 2000));
    const responses = Object.fromEntries(body.contents.flatMap((c) => c.parts).map((p) => p.functionResponse).filter(Boolean).map((f) => [f.name, f]));
    assert.deepEqual(responses.read_secret.response, {name: 'read_secret', error: 'permission denied: /etc/shadow'});
    const logs = responses.get_logs.response.content;
    assert.ok(logs.length < 2 * BUDGET, String(logs.length));
    followMarker(logs, MCP_TOOLS.get_logs, responses.get_logs.id);
  } finally {
    server.close();
  }
});
