// toolwire-render, code: Code and files: line numbers, highlight.js, a file's head; a markdown file drawn on request.
// Part of web/toolwire-render.js (see its header); everything drawn is untrusted.

import DOMPurify from '../vendor/purify.es.mjs';
import hljs from '../vendor/highlight.min.js';
import { markdown } from './markdown.js';
import { bytes, h } from './util.js';

const EXT_LANG = { rs: 'rust', js: 'javascript', mjs: 'javascript', ts: 'typescript', py: 'python', rb: 'ruby', go: 'go',
  java: 'java', c: 'c', h: 'c', cpp: 'cpp', cs: 'csharp', sh: 'bash', json: 'json', toml: 'ini', yml: 'yaml', yaml: 'yaml',
  md: 'markdown', html: 'xml', xml: 'xml', css: 'css', sql: 'sql', kt: 'kotlin', swift: 'swift', php: 'php' };

function languageOf(path, hint) {
  if (hint && hljs.getLanguage(hint)) return hint;
  const ext = typeof path === 'string' ? (path.split('.').pop() || '').toLowerCase() : '';
  return EXT_LANG[ext] && hljs.getLanguage(EXT_LANG[ext]) ? EXT_LANG[ext] : null;
}

/** Highlights `codeEl`'s own text; highlight.js escapes what it emits. */
export function highlightInPlace(codeEl, lang) {
  if (!lang || !hljs.getLanguage(lang) || codeEl.textContent.length > 200000) return;
  const out = hljs.highlight(codeEl.textContent, { language: lang, ignoreIllegals: true });
  codeEl.innerHTML = DOMPurify.sanitize(out.value, { ALLOWED_TAGS: ['span'], ALLOWED_ATTR: ['class'] });
  codeEl.classList.add('hljs');
}

function numbered(text, lang) {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const gutter = h('pre', { class: 'tw-gutter', 'aria-hidden': 'true' }, lines.map((_, i) => `${i + 1}`).join('\n'));
  const codeEl = h('code', {}, lines.join('\n'));
  highlightInPlace(codeEl, lang);
  // One box scrolls numbers and lines together; focusable, so the keyboard scrolls it.
  return h('div', { class: 'tw-code', tabindex: 0, 'aria-label': `code, ${lines.length} lines` }, gutter, h('pre', { class: 'tw-source' }, codeEl));
}

export function code(el, text, lang) {
  el.append(numbered(text, languageOf('', lang)));
  return 'code';
}

export function fileContent(el, data, v) {
  const head = h('div', { class: 'tw-file-head' }, h('code', {}, String(data.path || '')),
    typeof data.size === 'number' ? h('span', { class: 'tw-muted' }, ` ${bytes(data.size)}`) : null);
  el.append(head);
  // A declared text/plain wins over a guess from the path (`.../resource/1` is not troff).
  const plain = typeof v.mimeType === 'string' && v.mimeType.split(';')[0].trim().toLowerCase() === 'text/plain';
  const hint = (v.display || {}).language;
  const language = plain && !hint ? null : languageOf(data.path, hint);
  const source = numbered(data.content, language);
  el.append(source);
  if (language === 'markdown') {
    // A markdown file (README.md) is read as source, what a tool edits; a person may want
    // it drawn: a toggle, drawn on first use.
    let drawn = null;
    const toggle = h('button', { type: 'button', class: 'tw-copy', 'data-role': 'render-markdown', 'aria-pressed': 'false' }, 'rendered');
    toggle.addEventListener('click', () => {
      const on = toggle.getAttribute('aria-pressed') !== 'true';
      if (on && !drawn) {
        drawn = h('div', {});
        markdown(drawn, data.content);
        source.after(drawn);
      }
      toggle.setAttribute('aria-pressed', String(on));
      source.hidden = on;
      if (drawn) drawn.hidden = !on;
    });
    head.append(toggle);
  }
  return 'file_content';
}
