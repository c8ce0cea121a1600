// Small helpers shared by the app's modules: errors shown as text, dates, durations and
// sizes written for people, JSON made readable.

import { h } from '../toolwire-render.js';

export { h };

/** Shows `err` in `where` as an alert (text, never markup). */
export function showError(where, err) {
  where.append(h('p', { class: 'error', role: 'alert' }, String(err && err.message ? err.message : err)));
}

/** A date and time in the person's locale. */
export function when(ms) {
  try {
    return new Date(ms).toLocaleString();
  } catch {
    return '';
  }
}

export function pretty(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}
