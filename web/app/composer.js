// The composer of a session: the chat box when the server has a model, else the
// playground (pick a tool, fill a form built from its inputSchema, call it).

import { api } from './api.js';
import { h, showError } from './util.js';
import { schemaForm } from './forms.js';
import { toolHints } from './tools.js';

export function chatBox(view) {
  const form = h('form', { class: 'chat' },
    h('textarea', { name: 'text', rows: 3, placeholder: `Message ${view.info.model || 'the model'}` }),
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
    view.timeline.append(h('div', { class: 'msg user pending' }, typed));
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
  const box = h('section', { class: 'playground' }, h('h2', {}, 'Call a tool'));
  const select = h('select', { name: 'tool' },
    [...view.tools.values()].map((t) => h('option', { value: t.name }, t.name)));
  const description = h('p', { class: 'muted' });
  const hints = h('p', { class: 'tool-hints' });
  const holder = h('div');
  let form = null;
  const pick = () => {
    const tool = view.tools.get(select.value);
    description.textContent = tool ? tool.description || '' : '';
    hints.replaceChildren(...toolHints(tool).map((t) => h('span', { class: `hint hint-${t.replace(/ /g, '-')}` }, t)));
    form = schemaForm(tool && tool.inputSchema, 'input');
    form.el.append(h('button', { type: 'submit' }, 'Call'));
    form.el.addEventListener('submit', async (e) => {
      e.preventDefault();
      const input = form.value();
      if (input instanceof Error) return showError(holder, input);
      try {
        await api(`/api/sessions/${view.id}/calls`, { json: { tool: select.value, input: input || {} } });
      } catch (err) {
        showError(holder, err);
      }
    });
    holder.replaceChildren(form.el);
  };
  select.addEventListener('change', pick);
  box.append(h('label', {}, 'Tool ', select), hints, description, holder);
  if (view.tools.size) pick();
  return box;
}
