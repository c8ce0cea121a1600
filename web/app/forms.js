// Forms built from a JSON Schema: the playground's tool input, an elicitation's answer.
// Fields come in the schema's property order; values are read back typed, or as an Error.

import { h, pretty } from './util.js';

/** A form for `schema`: one field per property of an object schema, else one field.
 * Returns the form and a function that reads its value (or an Error). */
let formSeq = 0;

export function schemaForm(schema, name) {
  // Checked here, before submit, field by field (required, bounds, pattern, format), with
  // the message beside the field: the browser's own bubbles name no schema rule.
  const el = h('form', { class: 'schema-form', novalidate: true });
  const n = (formSeq += 1);
  const props = schema && schema.type === 'object' && schema.properties && typeof schema.properties === 'object'
    ? schema.properties : null;
  const required = new Set(Array.isArray(schema && schema.required) ? schema.required : []);
  const fields = [];
  const add = (key, prop, label) => {
    const f = field(key, prop || {}, required.has(key));
    f.prop = prop || {};
    f.label = label;
    f.error = h('small', { class: 'field-error', id: `f${n}-${fields.length}-error`, role: 'alert', hidden: true });
    for (const input of f.inputs || [f.input]) {
      input.setAttribute('aria-describedby', f.error.id);
      if (required.has(key)) input.setAttribute('aria-required', 'true');
    }
    fields.push([key, f]);
    const mark = required.has(key) ? h('span', { class: 'required', 'aria-hidden': 'true' }, ' *') : null;
    const description = prop && prop.description ? h('small', { class: 'muted' }, prop.description) : null;
    // A group of checkboxes is a fieldset named by its legend; one control is a label.
    el.append(f.inputs
      ? h('fieldset', { class: 'checks' }, h('legend', {}, label, mark), f.input, description, f.error)
      : h('label', {}, h('span', {}, label, mark), f.input, description, f.error));
  };
  if (props) {
    for (const [key, prop] of Object.entries(props)) add(key, prop, (prop && prop.title) || key);
  } else {
    add(name, schema || { type: 'string' }, name);
  }
  const value = () => {
    const out = {};
    let first = null;
    for (const [key, f] of fields) {
      let v = f.read();
      let problem = v instanceof Error ? v.message : null;
      // An empty required text is missing, as in HTML.
      if (!problem && (v === undefined || v === '') && required.has(key)) problem = 'required';
      if (!problem && v !== undefined) problem = check(f.prop, v);
      f.error.textContent = problem ? `${f.label}: ${problem}` : '';
      f.error.hidden = !problem;
      for (const input of f.inputs || [f.input]) input.setAttribute('aria-invalid', String(!!problem));
      if (problem) {
        if (!first) first = [key, problem, f];
        v = undefined;
      }
      if (v !== undefined) out[key] = v;
    }
    if (first) {
      (first[2].inputs ? first[2].inputs[0] : first[2].input).focus();
      return new Error(`${first[0]}: ${first[1]}`);
    }
    return props ? out : out[name];
  };
  /** Fills the fields from `values` (an earlier call's input, for Edit & re-run). A field
   * the call left out is emptied, not left at its default, so that the call made again is
   * the one made before; a checkbox, which always sends a value, keeps its default. */
  const set = (values) => {
    const source = props ? (values && typeof values === 'object' ? values : {}) : { [name]: values };
    for (const [key, f] of fields) {
      if (key in source) f.set(source[key]);
      else if (!f.alwaysSent) f.set(undefined);
    }
  };
  return { el, value, set };
}

/** The choices a schema offers: `enum` (labelled by `enumNames`), or `oneOf`/`anyOf` of
 * `const`s (labelled by their titles); null when it offers none. */
function choicesOf(prop) {
  if (!prop || typeof prop !== 'object') return null;
  if (Array.isArray(prop.enum)) {
    const names = Array.isArray(prop.enumNames) ? prop.enumNames : [];
    return prop.enum.map((value, i) => ({ value, label: String(names[i] ?? value) }));
  }
  const alts = Array.isArray(prop.oneOf) ? prop.oneOf : Array.isArray(prop.anyOf) ? prop.anyOf : null;
  if (alts && alts.length && alts.every((o) => o && typeof o === 'object' && 'const' in o)) {
    return alts.map((o) => ({ value: o.const, label: String(o.title ?? o.const) }));
  }
  return null;
}

const FORMAT_INPUT = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };

function field(key, prop, required) {
  const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== 'null') : prop.type;
  const multi = type === 'array' ? choicesOf(prop.items) : null;
  if (multi) {
    // A multi-select is a group of checkboxes: every choice in sight, one click each.
    const defaults = Array.isArray(prop.default) ? prop.default : [];
    const inputs = multi.map((c, i) => {
      const box = h('input', { type: 'checkbox', name: key, value: String(i) });
      box.checked = defaults.includes(c.value);
      return box;
    });
    const input = h('div', { class: 'check-list' }, multi.map((c, i) => h('label', {}, inputs[i], h('span', {}, c.label))));
    return {
      input,
      inputs,
      read: () => inputs.filter((b) => b.checked).map((b) => multi[Number(b.value)].value),
      set: (v) => inputs.forEach((b, i) => { b.checked = Array.isArray(v) && v.some((x) => x === multi[i].value); }),
    };
  }
  const choices = choicesOf(prop);
  if (choices) {
    const input = h('select', { name: key }, required ? null : h('option', { value: '' }, ''),
      choices.map((c, i) => h('option', { value: String(i) }, c.label)));
    const at = choices.findIndex((c) => c.value === prop.default);
    if (at >= 0) input.value = String(at);
    return {
      input,
      read: () => (input.value === '' ? undefined : choices[Number(input.value)].value),
      set: (v) => { const i = choices.findIndex((c) => c.value === v); input.value = i >= 0 ? String(i) : ''; },
    };
  }
  if (type === 'boolean') {
    const input = h('input', { type: 'checkbox', name: key });
    input.checked = prop.default === true;
    return { input, alwaysSent: true, read: () => input.checked, set: (v) => { input.checked = v === true; } };
  }
  if (type === 'integer' || type === 'number') {
    const input = h('input', { type: 'number', name: key, step: type === 'integer' ? 1 : 'any' });
    if (typeof prop.default === 'number') input.value = String(prop.default);
    return {
      input,
      read: () => {
        if (input.value === '') return undefined;
        const n = Number(input.value);
        return Number.isFinite(n) ? n : new Error('not a number');
      },
      set: (v) => { input.value = typeof v === 'number' ? String(v) : ''; },
    };
  }
  if (type === 'string' || type === undefined && !prop.properties) {
    const long = (prop.maxLength || 0) > 200 || /command|text|content|body/i.test(key);
    let input = long ? h('textarea', { name: key, rows: 3 })
      : h('input', { name: key, type: FORMAT_INPUT[prop.format] || 'text' });
    // A one-line input drops line breaks: a field given several lines (Edit & re-run of
    // multi-line code, a default, a pasted block) becomes a text area and keeps them.
    const keepLines = (value) => {
      if (input.tagName === 'TEXTAREA' || !value.includes('\n')) return;
      const area = h('textarea', { rows: Math.min(12, Math.max(3, value.split('\n').length)) });
      for (const a of input.attributes) if (a.name !== 'type') area.setAttribute(a.name, a.value);
      const focused = document.activeElement === input;
      input.replaceWith(area);
      input = area;
      if (focused) area.focus();
    };
    const put = (value) => { keepLines(value); input.value = value; };
    if (!long) {
      input.addEventListener('paste', (e) => {
        const pasted = e.clipboardData ? e.clipboardData.getData('text/plain') : '';
        if (!pasted.includes('\n')) return;
        e.preventDefault();
        const at = input.selectionStart ?? input.value.length;
        const to = input.selectionEnd ?? at;
        put(input.value.slice(0, at) + pasted + input.value.slice(to));
        input.focus();
        input.setSelectionRange(at + pasted.length, at + pasted.length);
      });
    }
    if (typeof prop.default === 'string') put(prop.default);
    return {
      // The element in the form now: a text area once it was given several lines.
      get input() { return input; },
      read: () => (input.value === '' && !required ? undefined : input.value),
      set: (v) => put(typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v)),
    };
  }
  // Objects and arrays: JSON text.
  const input = h('textarea', { name: key, rows: 3, placeholder: 'JSON' });
  if (prop.default !== undefined) input.value = pretty(prop.default);
  return {
    input,
    read: () => {
      if (input.value.trim() === '') return undefined;
      try {
        return JSON.parse(input.value);
      } catch {
        return new Error('not valid JSON');
      }
    },
    set: (v) => { input.value = v === undefined ? '' : pretty(v); },
  };
}

const FORMATS = {
  email: [/^[^\s@]+@[^\s@]+$/, 'an email address'],
  uri: [/^[A-Za-z][A-Za-z0-9+.-]*:\S*$/, 'a URI (scheme:…)'],
  date: [/^\d{4}-\d{2}-\d{2}$/, 'a date (YYYY-MM-DD)'],
};

/** What is wrong with `v` under `prop` (the rules a form can check), or null. */
function check(prop, v) {
  if (!prop || typeof prop !== 'object') return null;
  if (typeof v === 'string') {
    if (typeof prop.minLength === 'number' && v.length < prop.minLength) return `at least ${prop.minLength} characters`;
    if (typeof prop.maxLength === 'number' && v.length > prop.maxLength) return `at most ${prop.maxLength} characters`;
    if (typeof prop.pattern === 'string') {
      try {
        if (!new RegExp(prop.pattern, 'u').test(v)) return `must match ${prop.pattern}`;
      } catch { /* a pattern this browser cannot read: the server checks it */ }
    }
    const format = FORMATS[prop.format];
    if (format && !format[0].test(v)) return `must be ${format[1]}`;
  }
  if (typeof v === 'number') {
    if (typeof prop.minimum === 'number' && v < prop.minimum) return `at least ${prop.minimum}`;
    if (typeof prop.maximum === 'number' && v > prop.maximum) return `at most ${prop.maximum}`;
    if (typeof prop.exclusiveMinimum === 'number' && v <= prop.exclusiveMinimum) return `more than ${prop.exclusiveMinimum}`;
    if (typeof prop.exclusiveMaximum === 'number' && v >= prop.exclusiveMaximum) return `less than ${prop.exclusiveMaximum}`;
    const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== 'null') : prop.type;
    if (type === 'integer' && !Number.isInteger(v)) return 'a whole number';
  }
  if (Array.isArray(v)) {
    if (typeof prop.minItems === 'number' && v.length < prop.minItems) return `choose at least ${prop.minItems}`;
    if (typeof prop.maxItems === 'number' && v.length > prop.maxItems) return `choose at most ${prop.maxItems}`;
  }
  return null;
}
