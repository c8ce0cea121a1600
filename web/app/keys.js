// Keyboard shortcuts of a session: j and k move between cards, e jumps to the next error,
// o folds or unfolds the card in focus, / goes to the filter, c to the composer, ? lists
// them. Keys typed in a field are the field's.

import { h } from './util.js';

const SHORTCUTS = [
  ['j', 'next call'],
  ['k', 'previous call'],
  ['e', 'next error'],
  ['o', 'fold or unfold the call in focus'],
  ['/', 'filter the calls'],
  ['c', 'the composer (call a tool, or the chat box)'],
  ['?', 'this list'],
];

let dialog = null;

/** The list of shortcuts, in a modal dialog. */
export function showKeys() {
  if (!dialog) {
    dialog = h('dialog', { 'aria-labelledby': 'keys-title' },
      h('h2', { id: 'keys-title' }, 'Keyboard shortcuts'),
      h('table', {}, h('tbody', {}, SHORTCUTS.map(([k, what]) => h('tr', {}, h('td', {}, h('kbd', {}, k)), h('td', {}, what))))),
      h('form', { method: 'dialog' }, h('button', { type: 'submit' }, 'Close')));
    document.body.append(dialog);
  }
  if (!dialog.open) dialog.showModal();
}

function typing(e) {
  const t = e.target;
  return t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
}

export function initKeys(view) {
  const button = document.getElementById('keys');
  if (button) button.onclick = showKeys;
  document.addEventListener('keydown', (e) => {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || typing(e)) return;
    const f = view.filters;
    const any = () => true;
    switch (e.key) {
      case 'j': f.move(any, 1); break;
      case 'k': f.move(any, -1); break;
      case 'e': f.nextError(); break;
      case 'o': {
        const card = document.activeElement && document.activeElement.closest && document.activeElement.closest('.card');
        if (card && card.toolwireCard) card.toolwireCard.setOpen(card.toolwireCard.body.hidden);
        break;
      }
      case '/': f.q.focus(); break;
      case 'c': {
        if (view.pickTool && view.composer.querySelector('select[name="tool"]')) {
          view.pickTool(view.composer.querySelector('select[name="tool"]').value);
          break;
        }
        const field = view.composer.querySelector('textarea, select, input');
        if (field) field.focus();
        break;
      }
      case '?': showKeys(); break;
      default: return;
    }
    e.preventDefault();
  });
}
