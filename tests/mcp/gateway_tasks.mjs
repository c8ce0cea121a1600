// Drives `toolwire gateway`'s tasks with the MCP TypeScript SDK client (pinned in
// package.json) as a 2025-11-25 host on stdio: the SDK's own task API (experimental.tasks:
// callToolStream with a task, getTask, getTaskResult, listTasks, cancelTask) against the
// gateway's tasks. One JSON line per step for crates/toolwire/tests/gateway_tasks.rs.
//
//   node gateway_tasks.mjs TOOLWIRE_BIN DATA_DIR HOST [GATEWAY ARGS...]
//
// Steps (GATEWAY_STEPS): {"stream": TOOL, "args": {...}} runs callToolStream with a task
// to its result; {"cancel": TOOL, "args": {...}} makes a task, cancels it once it works;
// {"list": true}; {"get": ID}; {"result": ID}; {"tool": TOOL} is a plain call.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';

const [bin, data, host, ...gatewayArgs] = process.argv.slice(2);
const steps = JSON.parse(process.env.GATEWAY_STEPS || '[]');
const transport = new StdioClientTransport({
  command: bin,
  args: ['gateway', '--host', host, ...gatewayArgs],
  env: { ...process.env, TOOLWIRE_DATA_DIR: data },
  stderr: 'inherit',
});
const client = new Client(
  { name: 'gateway-tasks-ts-host', version: '1.0.0' },
  { capabilities: { tasks: { list: {}, cancel: {} } } },
);
await client.connect(transport);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const tasks = client.experimental.tasks;
const { tools } = await client.listTools();
out({ step: 'list', version: transport._protocolVersion, capabilities: client.getServerCapabilities(), tools });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
for (const step of steps) {
  try {
    if (step.stream) {
      const messages = [];
      const stream = tasks.callToolStream({ name: step.stream, arguments: step.args || {} }, CallToolResultSchema, {
        task: { ttl: 120000 },
        timeout: 120000,
      });
      for await (const m of stream) {
        messages.push(m.type === 'error' ? { type: 'error', message: String(m.error) } : m);
      }
      out({ step: 'stream', messages });
    } else if (step.cancel) {
      const created = await client.request(
        { method: 'tools/call', params: { name: step.cancel, arguments: step.args || {}, task: { ttl: 60000 } } },
        CreateTaskResultSchema,
      );
      const id = created.task.taskId;
      let before;
      for (let i = 0; i < 100; i += 1) {
        before = await tasks.getTask(id);
        if (before.statusMessage || before.status !== 'working') break;
        await sleep(200);
      }
      const cancelled = await tasks.cancelTask(id);
      const after = await tasks.getTask(id);
      let resultError = null;
      try {
        await tasks.getTaskResult(id, CallToolResultSchema);
      } catch (e) {
        resultError = String(e);
      }
      out({ step: 'cancel', created, before, cancelled, after, resultError });
    } else if (step.list) {
      out({ step: 'tasks', listed: await tasks.listTasks() });
    } else if (step.get) {
      out({ step: 'get', got: await tasks.getTask(step.get) });
    } else {
      const result = await client.callTool({ name: step.tool, arguments: step.args || {} }, undefined, { timeout: 120000 });
      out({ step: 'call', result });
    }
  } catch (e) {
    out({ step: 'error', message: String(e) });
  }
}
await client.close();
