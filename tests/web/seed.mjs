// Sessions the accessibility test and the screenshot script share: every kind of result,
// an error, a pending approval and an MCP elicitation form, on a real `toolwire serve`
// with server-everything beside it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dirs, serve, api, store, until, everythingMcp } from './lib.mjs';
import { png, wav } from './media.mjs';

const b64 = (buf) => buf.toString('base64');

/** A served data dir with sessions: `kinds`, `approval`, `elicitation`, `links`. */
export async function seeded() {
  const d = dirs();
  writeFileSync(join(d.workspace, 'main.rs'), 'fn main() {\n    println!("hello");\n}\n');
  writeFileSync(join(d.workspace, 'pic.png'), png());
  const csv = ['city,population,country'];
  for (let i = 0; i < 40; i += 1) csv.push(`city${String(i).padStart(2, '0')},${(i * 7919) % 1000},c${i % 3}`);
  writeFileSync(join(d.workspace, 'cities.csv'), `${csv.join('\n')}\n`);
  const server = await serve(d, undefined, everythingMcp());
  const sessions = {};
  const s = await api(server.base, '/api/sessions', { title: 'Every kind of result' });
  sessions.kinds = s.id;
  for (const [tool, input] of [
    ['read_file', { path: 'main.rs' }],
    ['list_dir', {}],
    ['query_csv', { path: 'cities.csv' }],
    ['view_image', { path: 'pic.png' }],
    ['read_file', { path: 'missing.txt' }],
  ]) {
    // One after another, each stored before the next starts: the provider exports pair
    // each call with its result only when no later message came between them.
    const { callId } = await api(server.base, `/api/sessions/${s.id}/calls`, { tool, input });
    await until(async () => (await api(server.base, `/api/sessions/${s.id}`)).messages.some((m) => m.role === 'tool_result' && m.content.callId === callId), 15000, `the result of ${tool}`);
  }
  store(d, s.id, { content: [{ type: 'audio', data: b64(wav()), mimeType: 'audio/wav' }] }, 'media');
  store(d, s.id, {
    callId: 'call_md', toolName: 'notes', status: 'success',
    output: [
      { kind: 'text', mimeType: 'text/markdown', data: { content: '# Notes\n\n**bold** and a [link](https://example.com)\n\n```rust\nfn x() -> u32 { 42 }\n```\n' } },
      { kind: 'diff', data: { path: 'a.txt', original: 'one\ntwo\nthree\n', modified: 'one\n2\nthree\nfour\n', isNew: false } },
      { kind: 'structured', data: { nested: { deep: [1, 2, { k: 'v' }] }, flag: true, none: null } },
      { kind: 'text', data: { content: 'for the model only' }, annotations: { audience: ['assistant'] } },
    ],
  }, 'notes');
  await until(async () => (await api(server.base, `/api/sessions/${s.id}`)).messages.filter((m) => m.role === 'tool_result').length >= 7, 15000, 'seeded results');

  const a = await api(server.base, '/api/sessions', { title: 'A write waiting for approval' });
  sessions.approval = a.id;
  await api(server.base, `/api/sessions/${a.id}/calls`, { tool: 'write_file', input: { path: 'notes.txt', content: 'hello\n' } });

  const e = await api(server.base, '/api/sessions', { title: 'An MCP elicitation' });
  sessions.elicitation = e.id;
  // server-everything connects in the background: wait until its tools are listed.
  await until(async () => (await api(server.base, '/api/tools')).some((t) => t.name === 'ev__trigger-elicitation-request'), 30000, 'server-everything');
  const call = await api(server.base, `/api/sessions/${e.id}/calls`, { tool: 'ev__trigger-elicitation-request', input: {} });
  sessions.elicitationCall = call.callId;

  // Resource links (read-only: no approval), stored before the session is used.
  const l = await api(server.base, '/api/sessions', { title: 'Resource links' });
  sessions.links = l.id;
  const links = await api(server.base, `/api/sessions/${l.id}/calls`, { tool: 'ev__get-resource-links', input: { count: 2 } });
  await until(async () => (await api(server.base, `/api/sessions/${l.id}`)).messages.some((m) => m.role === 'tool_result' && m.content.callId === links.callId), 15000, 'the resource links');
  return { d, server, sessions };
}

/** Answers the approval that server-everything's elicitation tool asks first, then waits
 * for its form. */
export async function elicitationForm(page, server, sessions) {
  await page.goto(`${server.base}/sessions/${sessions.elicitation}`);
  await page.waitForSelector('body[data-ready="true"]');
  const card = page.locator(`.card[data-call-id="${sessions.elicitationCall}"]`);
  const approve = card.locator('button.approve');
  const form = card.locator('.ask form');
  await Promise.race([approve.waitFor({ timeout: 15000 }), form.waitFor({ timeout: 15000 })]);
  if (await approve.isVisible()) await approve.click();
  await form.waitFor({ timeout: 15000 });
  return card;
}
