// Runs a turn of `toolwire serve`'s AG-UI endpoint with AG-UI's own client (HttpAgent),
// checks every event it receives against @ag-ui/core's schemas, answers the approval
// interrupt by resuming, and prints what happened as one JSON object for the Rust test
// (crates/toolwire/tests/agui.rs).
//
//   node run.mjs URL "user text"
import { HttpAgent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';

const [url, text] = process.argv.slice(2);
const agent = new HttpAgent({ url, initialMessages: [{ id: 'u1', role: 'user', content: text }] });
const received = [];
const invalid = [];
// The results as sent, before the client folds them into its messages.
const resultEvents = [];
const subscriber = {
  onEvent({ event }) {
    received.push(event.type);
    if (event.type === 'TOOL_CALL_RESULT') resultEvents.push({ toolCallId: event.toolCallId, content: event.content });
    const checked = EventSchemas.safeParse(event);
    if (!checked.success) invalid.push({ type: event.type, issues: checked.error.issues.slice(0, 3) });
  },
};
const runs = [];
let outcome;
const first = agent.subscribe({ ...subscriber, onRunFinishedEvent({ event }) { outcome = event.outcome; } });
await agent.runAgent({ runId: 'run-1' });
// The ids of the client's messages after each run: a later run's snapshot keeps them.
runs.push({ events: received.splice(0), outcome, messageIds: agent.messages.map((m) => m.id) });
let resumed = 0;
while (outcome && outcome.type === 'interrupt' && resumed < 3) {
  resumed += 1;
  const resume = outcome.interrupts.map((i) => ({ interruptId: i.id, status: 'resolved', payload: { approved: true } }));
  outcome = undefined;
  await agent.runAgent({ runId: `run-${resumed + 1}`, resume });
  runs.push({
    events: received.splice(0),
    outcome,
    interrupts: resume.map((r) => r.interruptId),
    messageIds: agent.messages.map((m) => m.id),
  });
}
first.unsubscribe();
const tool = agent.messages.filter((m) => m.role === 'tool');
process.stdout.write(JSON.stringify({
  runs,
  invalid,
  messages: agent.messages.map((m) => ({ role: m.role, content: m.content, toolCalls: m.toolCalls })),
  toolResults: resultEvents,
  toolMessages: tool.map((m) => ({ toolCallId: m.toolCallId, content: m.content, error: m.error })),
  state: agent.state,
}) + '\n');
