// A small menu button: a button that opens a popover list of actions (the call card's
// Copy and Download). The list is a popover in the top layer, so a card's `overflow:
// hidden` never clips it; it is placed under its button (above it near the bottom of the
// window), closed by Escape, a click outside, a scroll, or picking an item, and walked
// with the arrow keys.

import { h } from './util.js';

let menuSeq = 0;

/** `label`: the button's name (shown, or only its icon on a narrow card); `icon`: the
 * icon class (`i-copy`); `items`: the menu's buttons and links (each gets role menuitem).
 * Returns { button, list }: put both in the page, side by side. */
export function menuButton(label, icon, items, attrs = {}) {
  const id = `menu-${(menuSeq += 1)}`;
  const list = h('div', { class: 'menu', id, popover: 'auto', role: 'menu', 'aria-label': label });
  for (const item of items) {
    if (!item) continue;
    item.setAttribute('role', 'menuitem');
    item.classList.add('menu-item');
    list.append(item);
  }
  const button = h('button', { type: 'button', class: `menu-button i ${icon}`, 'aria-haspopup': 'menu', 'aria-expanded': 'false',
    'aria-controls': id, popovertarget: id, title: label, ...attrs }, h('span', { class: 'label' }, label), h('span', { class: 'caret', 'aria-hidden': 'true' }));
  // Said at once, not only when the (asynchronous) toggle event comes: a screen reader or a
  // script asking right after a pick hears the menu closed.
  const close = () => {
    if (list.matches(':popover-open')) list.hidePopover();
    button.setAttribute('aria-expanded', 'false');
  };
  list.addEventListener('toggle', (e) => {
    const open = e.newState === 'open';
    button.setAttribute('aria-expanded', String(open));
    if (!open) {
      removeEventListener('scroll', close, true);
      return;
    }
    place(list, button);
    // A fixed list would part from its button as the page scrolls: it closes instead.
    addEventListener('scroll', close, { capture: true, passive: true, once: true });
    const first = visibleItems(list)[0];
    if (first) first.focus();
  });
  list.addEventListener('click', (e) => { if (e.target.closest('.menu-item')) close(); });
  list.addEventListener('keydown', (e) => {
    const items = visibleItems(list);
    const at = items.indexOf(document.activeElement);
    let next = -1;
    if (e.key === 'ArrowDown') next = (at + 1) % items.length;
    else if (e.key === 'ArrowUp') next = (at - 1 + items.length) % items.length;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = items.length - 1;
    else if (e.key === 'Tab') close();
    if (next >= 0 && items[next]) {
      e.preventDefault();
      items[next].focus();
    }
  });
  return { button, list };
}

function visibleItems(list) {
  return [...list.querySelectorAll('.menu-item')].filter((i) => !i.hidden && i.getClientRects().length);
}

/** Under the button, its left edges lined up, kept inside the window; above the button
 * when there is no room below. */
function place(list, button) {
  const r = button.getBoundingClientRect();
  const w = list.offsetWidth;
  const hgt = list.offsetHeight;
  const left = Math.max(8, Math.min(r.left, innerWidth - w - 8));
  const below = r.bottom + 4 + hgt <= innerHeight - 8;
  list.style.left = `${left}px`;
  list.style.top = `${below ? r.bottom + 4 : Math.max(8, r.top - 4 - hgt)}px`;
}
