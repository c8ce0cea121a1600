// A tool call's card (`data-call-id`, `data-state`): arguments, status, duration, live
// progress, the approval or question waiting for the person, and the result drawn by the
// renderer once the card nears the viewport.
//
// Card states, as the AI SDK's tool parts name them: input-available (running),
// approval-requested, approval-responded, output-available, output-error, output-denied,
// and input-requested (a question or form waits for the person).

import { renderResult } from '../toolwire-render.js';
import { api, ID, resourceUrl } from './api.js';
import { h, pretty, showError } from './util.js';
import { schemaForm } from './forms.js';

/** @typedef {import('../toolwire.d.ts').ToolResult} ToolResult */

const STATUS_STATE = {
  success: 'output-available',
  partial: 'output-available',
  error: 'output-error',
  denied: 'output-denied',
  cancelled: 'output-error',
  timeout: 'output-error',
};

export class Card {
  constructor(view, callId, name, input) {
    this.view = view;
    this.callId = callId;
    this.name = name;
    this.input = input;
    this.result = null;
    this.el = h('article', { class: 'card', 'data-call-id': callId, 'data-state': 'input-available', 'data-tool': name });
    this.statusEl = h('span', { class: 'status' }, 'running');
    this.durationEl = h('span', { class: 'duration muted' });
    this.progressEl = h('progress', { hidden: true, max: 1, value: 0 });
    this.progressText = h('span', { class: 'progress-text muted' });
    this.suspensionEl = h('div', { class: 'suspension' });
    this.resultEl = h('div', { class: 'result' });
    this.detailEl = h('pre', { class: 'detail', hidden: true });
    this.linksEl = h('span', { class: 'links' });
    // Stops the call while it runs or waits for a person; it then gets a cancelled result.
    this.stopEl = h('button', { type: 'button', class: 'stop', title: 'Stop this call', onclick: () => this.stop() }, 'Stop');
    const detailButton = (label, what) => h('button', { type: 'button', 'data-show': what, onclick: () => this.toggleDetail(what) }, label);
    this.el.append(
      h('header', {}, h('span', { class: 'tool' }, name), this.statusEl, this.durationEl, this.linksEl, this.stopEl),
      h('details', { class: 'args' }, h('summary', {}, 'arguments'), h('pre', {}, pretty(input))),
      h('div', { class: 'progress' }, this.progressEl, this.progressText),
      this.suspensionEl,
      this.resultEl,
      h('footer', {},
        detailButton('stored JSON', 'json'),
        detailButton('diagnostics', 'diagnostics'),
        detailButton('_meta', 'meta'),
        h('span', { class: 'schema-check muted' })),
      this.detailEl);
  }

  setState(state, label) {
    this.el.dataset.state = state;
    this.statusEl.textContent = label || state;
    this.stopEl.hidden = /^output-/.test(state);
  }

  async stop() {
    this.stopEl.disabled = true;
    try {
      await api(`/api/sessions/${this.view.id}/calls/${encodeURIComponent(this.callId)}/cancel`, { json: {} });
    } catch (err) {
      this.stopEl.disabled = false;
      showError(this.suspensionEl, err);
    }
  }

  progress(done, total, message) {
    this.progressEl.hidden = false;
    if (total) {
      this.progressEl.max = total;
      this.progressEl.value = Math.min(done, total);
    } else {
      this.progressEl.removeAttribute('value');
    }
    this.progressText.textContent = `${done}${total ? ` / ${total}` : ''}${message ? ` ${message}` : ''}`;
  }

  /** The suspension's controls: approve and deny, or a form for the answer. */
  suspend(suspension) {
    if (!suspension || !ID.test(suspension.id || '')) return;
    this.suspension = suspension;
    const approval = suspension.reason === 'approval';
    this.setState(approval ? 'approval-requested' : 'input-requested', approval ? 'needs approval' : 'needs an answer');
    const box = h('div', { class: 'ask', 'data-suspension-id': suspension.id },
      h('p', { class: 'prompt' }, suspension.prompt || ''));
    const send = async (resolution) => {
      for (const b of box.querySelectorAll('button, input, select, textarea')) b.disabled = true;
      try {
        await api(`/api/sessions/${this.view.id}/suspensions/${suspension.id}`, { json: resolution });
        // The result may have arrived on the feed before this answer did.
        if (/requested$/.test(this.el.dataset.state)) {
          this.setState('approval-responded', resolution.type === 'deny' ? 'denied, waiting' : 'answered, running');
        }
        box.remove();
      } catch (err) {
        for (const b of box.querySelectorAll('button, input, select, textarea')) b.disabled = false;
        showError(box, err);
      }
    };
    if (approval) {
      box.append(
        h('button', { type: 'button', class: 'approve', onclick: () => send({ type: 'approve' }) }, 'Approve'),
        h('button', { type: 'button', class: 'deny', onclick: () => send({ type: 'deny', reason: 'denied in the web app' }) }, 'Deny'));
    } else {
      const form = schemaForm(suspension.inputSchema, 'answer');
      form.el.addEventListener('submit', (e) => {
        e.preventDefault();
        const value = form.value();
        if (value instanceof Error) return showError(box, value);
        send({ type: 'answer', value });
      });
      form.el.append(
        h('button', { type: 'submit', class: 'answer' }, 'Answer'),
        h('button', { type: 'button', class: 'deny', onclick: () => send({ type: 'deny', reason: 'declined in the web app' }) }, 'Decline'),
        // MCP's third answer: the question is dismissed, not refused.
        h('button', { type: 'button', class: 'cancel', onclick: () => send({ type: 'cancel', reason: 'cancelled in the web app' }) }, 'Cancel'));
      box.append(form.el);
    }
    this.suspensionEl.replaceChildren(box);
  }

  resolved() {
    this.suspensionEl.replaceChildren();
    if (this.el.dataset.state !== 'output-available') this.setState('approval-responded', 'answered, running');
  }

  /** @param {ToolResult} result */
  setResult(result) {
    this.result = result;
    if (result.status === 'suspended') {
      this.suspend(result.suspension);
      return;
    }
    this.suspensionEl.replaceChildren();
    this.progressEl.hidden = true;
    this.setState(STATUS_STATE[result.status] || 'output-available', result.status);
    const ms = result.metadata && result.metadata.durationMs;
    this.durationEl.textContent = typeof ms === 'number' ? ` ${ms} ms` : '';
    const child = result.metadata && result.metadata.childSessionId;
    this.linksEl.replaceChildren();
    if (typeof child === 'string' && ID.test(child)) {
      this.linksEl.append(h('a', { href: `/sessions/${child}`, class: 'child-session' }, 'open the subagent session'));
    }
    // Drawn when the card nears the viewport: a long session costs only what shows.
    this.drawn = false;
    this.view.whenVisible(this, () => this.draw());
    this.el.querySelector('.schema-check').textContent = schemaCheck(result, this.view.tools.get(this.name));
    if (!this.detailEl.hidden) this.toggleDetail(this.detailEl.dataset.what, true);
  }

  draw() {
    if (this.drawn || !this.result) return;
    this.drawn = true;
    try {
      renderResult(this.resultEl, this.result, { resourceUrl, sandboxOrigin: this.view.info.sandboxOrigin, app: this.view.appHost(this) });
    } catch (err) {
      this.resultEl.replaceChildren();
      showError(this.resultEl, `cannot show this result: ${err.message}`);
    }
  }

  toggleDetail(what, keep) {
    if (!keep && !this.detailEl.hidden && this.detailEl.dataset.what === what) {
      this.detailEl.hidden = true;
      return;
    }
    const r = this.result || {};
    const value = what === 'json' ? r
      : what === 'diagnostics' ? (r.diagnostics || [])
        : ((r.metadata && r.metadata.mcp) || {});
    this.detailEl.dataset.what = what;
    this.detailEl.textContent = pretty(value);
    this.detailEl.hidden = false;
  }
}

/** Whether the result's structured value matched the tool's outputSchema. The executor
 * checks it before storing: a mismatch is stored as an `invalid_output` error. */
function schemaCheck(result, tool) {
  if (!tool || !tool.outputSchema) return '';
  if (result.error && result.error.code === 'invalid_output') return `outputSchema: does not match (${result.error.message})`;
  return result.status === 'success' || result.status === 'partial' ? 'outputSchema: matched' : '';
}
