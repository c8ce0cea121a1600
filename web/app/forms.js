// Forms built from a JSON Schema: the playground's tool input, an elicitation's answer.
// Fields come in the schema's property order; values are read back typed, or as an Error.

import { h, pretty } from './util.js';

/** A form for `schema`: one field per property of an object schema, else one field.
 * Returns the form and a function that reads its value (or an Error). */
export function schemaForm(schema, name) {
  const el = h('form', { class: 'schema-form' });
  const props = schema && schema.type === 'object' && schema.properties && typeof schema.properties === 'object'
    ? schema.properties : null;
  const required = new Set(Array.isArray(schema && schema.required) ? schema.required : []);
  const fields = [];
  const add = (key, prop, label) => {
    const f = field(key, prop || {}, required.has(key));
    fields.push([key, f]);
    el.append(h('label', {}, h('span', {}, label, required.has(key) ? ' *' : ''), f.input,
      prop && prop.description ? h('small', { class: 'muted' }, prop.description) : null));
  };
  if (props) {
    for (const [key, prop] of Object.entries(props)) add(key, prop, (prop && prop.title) || key);
  } else {
    add(name, schema || { type: 'string' }, name);
  }
  const value = () => {
    const out = {};
    for (const [key, f] of fields) {
      const v = f.read();
      if (v instanceof Error) return new Error(`${key}: ${v.message}`);
      if (v !== undefined) out[key] = v;
      else if (required.has(key)) return new Error(`${key} is required`);
    }
    return props ? out : out[name];
  };
  return { el, value };
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
    const input = h('select', { name: key, multiple: true, size: Math.min(multi.length, 6) },
      multi.map((c, i) => h('option', { value: String(i) }, c.label)));
    const defaults = Array.isArray(prop.default) ? prop.default : [];
    for (const [i, c] of multi.entries()) input.options[i].selected = defaults.includes(c.value);
    return { input, read: () => [...input.selectedOptions].map((o) => multi[Number(o.value)].value) };
  }
  const choices = choicesOf(prop);
  if (choices) {
    const input = h('select', { name: key }, required ? null : h('option', { value: '' }, ''),
      choices.map((c, i) => h('option', { value: String(i) }, c.label)));
    const at = choices.findIndex((c) => c.value === prop.default);
    if (at >= 0) input.value = String(at);
    return { input, read: () => (input.value === '' ? undefined : choices[Number(input.value)].value) };
  }
  if (type === 'boolean') {
    const input = h('input', { type: 'checkbox', name: key });
    input.checked = prop.default === true;
    return { input, read: () => input.checked };
  }
  if (type === 'integer' || type === 'number') {
    const input = h('input', { type: 'number', name: key, step: type === 'integer' ? 1 : 'any' });
    if (prop.default !== undefined) input.value = String(prop.default);
    return {
      input,
      read: () => {
        if (input.value === '') return undefined;
        const n = Number(input.value);
        return Number.isFinite(n) ? n : new Error('not a number');
      },
    };
  }
  if (type === 'string' || type === undefined && !prop.properties) {
    const long = (prop.maxLength || 0) > 200 || /command|text|content|body/i.test(key);
    const input = long ? h('textarea', { name: key, rows: 3 })
      : h('input', { name: key, type: FORMAT_INPUT[prop.format] || 'text' });
    if (typeof prop.default === 'string') input.value = prop.default;
    return { input, read: () => (input.value === '' && !required ? undefined : input.value) };
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
  };
}
