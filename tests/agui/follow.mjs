// Drives an external AG-UI agent through `toolwire serve --agui-follow`'s proxy with
// AG-UI's own client (HttpAgent), and watches the session's live feed in toolwire's event
// API while it does, for crates/toolwire/tests/agui_follow.rs. Run 1 offers a front-end
// tool, which the agent calls (the run ends with it open); run 2 sends its result back as
// a `tool` message. Every event the client receives is checked against @ag-ui/core's
// schemas. Prints one JSON object.
//
//   node follow.mjs BASE THREAD "user text"
import { HttpAgent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';

const [base, threadId, text] = process.argv.slice(2);
const agent = new HttpAgent({
  url: `${base}/api/agui/follow`,
  threadId,
  initialMessages: [{ id: 'u1', role: 'user', content: text }],
});
const received = [];
const invalid = [];
agent.subscribe({
  onEvent({ event }) {
    received.push(event.type);
    const checked = EventSchemas.safeParse(event);
    if (!checked.success) invalid.push({ type: event.type, issues: checked.error.issues.slice(0, 3) });
  },
});
const tools = [{
  name: 'pick_color',
  description: 'Asks the person for a colour (runs in the front end).',
  parameters: { type: 'object', properties: { hint: { type: 'string' } } },
}];
await agent.runAgent({ runId: 'run-1', tools });
const run1 = received.splice(0);

// The session exists now: its live feed, from after what run 1 recorded.
const session = await (await fetch(`${base}/api/sessions/${threadId}`)).json();
const feed = await fetch(`${base}/api/sessions/${threadId}/events?after=${session.lastEventSeq}`, { headers: { accept: 'text/event-stream' } });
const live = [];
const reading = (async () => {
  const reader = feed.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let sawRun2 = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const name = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (!name || !data) continue;
      const event = JSON.parse(data);
      live.push({ type: name, seq: event.seq, callId: event.result?.callId, kinds: event.result?.output?.map((v) => v.kind) });
      if (name === 'tool_result' && event.result?.toolName === 'pick_color') sawRun2 = true;
      if (sawRun2 && name === 'turn_ended') { reader.cancel(); return; }
    }
  }
})();

// The front end runs its tool and sends the result back in the next run.
const call = agent.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.function.name === 'pick_color');
if (call) agent.addMessage({ id: 'tool-1', role: 'tool', toolCallId: call.id, content: 'blue' });
await agent.runAgent({ runId: 'run-2', tools });
const run2 = received.splice(0);
await Promise.race([reading, new Promise((r) => setTimeout(r, 10000))]);

process.stdout.write(JSON.stringify({
  invalid,
  runs: [run1, run2],
  frontendCall: call?.id ?? null,
  messagesAfterRun1: session.messages?.length ?? null,
  live,
  messages: agent.messages.map((m) => ({ role: m.role, content: m.content, toolCallId: m.toolCallId, toolCalls: m.toolCalls })),
}) + '\n');
process.exit(0);
