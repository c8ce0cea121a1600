// The composer of a session: the chat box when the server has a model, else the
// playground (pick a tool, fill a form built from its inputSchema, call it).

import { api } from './api.js';
import { h, showError } from './util.js';
import { schemaForm } from './forms.js';
import { toolHints } from './tools.js';

export function chatBox(view) {
  const form = h('form', { class: 'chat composer', 'aria-label': 'Message the model' },
    h('textarea', { name: 'text', rows: 2, placeholder: `Message ${view.info.model || 'the model'}`, 'aria-label': `Message ${view.info.model || 'the model'}` }),
    h('button', { type: 'submit' }, 'Send'));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const typed = form.text.value;
    if (!typed.trim()) return;
    form.text.value = '';
    // What MCP Apps asked to put in the model's context since the last message goes
    // with this one (the extension lets a host defer it until then).
    const context = [...view.modelContext.entries()].map(([callId, p]) => {
      const blocks = (Array.isArray(p.content) ? p.content : []).filter((c) => c && c.type === 'text').map((c) => c.text);
      const data = p.structuredContent ? JSON.stringify(p.structuredContent) : '';
      return `[Context from the app of call ${callId}: ${[...blocks, data].filter(Boolean).join(' ')}]`;
    });
    view.modelContext.clear();
    const text = [...context, typed].join('\n');
    view.append(h('div', { class: 'msg user pending' }, typed));
    try {
      await api(`/api/sessions/${view.id}/messages`, { json: { text } });
    } catch (err) {
      showError(view.timeline, err);
    }
  });
  return form;
}

/** Without a model: pick a tool, fill a form built from its inputSchema, call it. */
export function playground(view) {
  const select = h('select', { name: 'tool', id: 'composer-tool' });
  const description = h('p', { class: 'description' });
  const hints = h('p', { class: 'tool-hints' });
  const holder = h('div');
  const body = h('div', { class: 'composer-body', id: 'composer-body', tabindex: 0, 'aria-label': 'The tool\'s form' }, description, holder);
  const fold = h('button', { type: 'button', class: 'small', 'aria-expanded': 'true', 'aria-controls': body.id,
    onclick: () => open(body.hidden) }, 'Hide form');
  const open = (yes) => {
    body.hidden = !yes;
    fold.setAttribute('aria-expanded', String(yes));
    fold.textContent = yes ? 'Hide form' : 'Show form';
  };
  const box = h('section', { class: 'playground composer', 'aria-labelledby': 'composer-title' },
    h('div', { class: 'composer-head' }, h('h2', { id: 'composer-title' }, 'Call a tool'),
      h('label', {}, h('span', { class: 'visually-hidden' }, 'Tool'), select), hints, h('span', { class: 'spacer' }), fold),
    body);
  let form = null;
  const options = () => {
    const current = select.value;
    select.replaceChildren(...[...view.tools.values()].map((t) => h('option', { value: t.name }, t.name)));
    if (current && view.tools.has(current)) select.value = current;
  };
  const pick = () => {
    const tool = view.tools.get(select.value);
    description.textContent = tool ? tool.description || '' : '';
    hints.replaceChildren(...toolHints(tool).map((t) => h('span', { class: `hint hint-${t.replace(/ /g, '-')}` }, t)));
    form = schemaForm(tool && tool.inputSchema, 'input');
    form.el.append(h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Call')));
    form.el.addEventListener('submit', async (e) => {
      e.preventDefault();
      const input = form.value();
      // Each field says what is wrong beside it (forms.js).
      if (input instanceof Error) return;
      try {
        const accepted = await api(`/api/sessions/${view.id}/calls`, { json: { tool: select.value, input: input || {} } });
        // Its card comes on the feed: brought into view, not left under this form.
        view.reveal(accepted.callId);
      } catch (err) {
        showError(holder, err);
      }
    });
    holder.replaceChildren(form.el);
  };
  select.addEventListener('change', () => {
    pick();
    open(true);
  });
  options();
  if (view.tools.size) pick();
  // Folded to its one line while there are calls to read, on a narrow screen, or when the
  // session has calls already; opened by picking a tool, `c`, or Show form.
  view.composerStart = (hasCalls) => open(!hasCalls && !matchMedia('(max-width: 820px)').matches);
  // Tools of a server that became ready join the picker; the form in progress stays.
  view.catalogue.onChange(() => {
    const had = select.value;
    options();
    if (!had && view.tools.size) pick();
  });
  /** A tool picked in the sidebar: its form, ready to fill. */
  view.pickTool = (name, input) => {
    if (!view.tools.has(name)) return;
    select.value = name;
    pick();
    // Edit & re-run: the earlier call's arguments, ready to change.
    if (input !== undefined) form.set(input);
    open(true);
    const first = holder.querySelector('input, textarea, select') || select;
    first.focus();
  };
  return box;
}
