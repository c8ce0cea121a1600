// The colour theme: the system's by default, or light or dark as the person chose (kept in
// localStorage). The choice is `data-theme` on <html>, which app.css and
// toolwire-render.css both follow.

const KEY = 'toolwire-theme';
const ORDER = ['system', 'light', 'dark'];

function apply(theme) {
  if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}

/** Applies the stored choice and wires the top bar's button to cycle through them. */
export function initTheme() {
  let theme = 'system';
  try {
    theme = localStorage.getItem(KEY) || 'system';
  } catch { /* storage refused: the system's theme */ }
  if (!ORDER.includes(theme)) theme = 'system';
  apply(theme);
  const button = document.getElementById('theme');
  if (!button) return;
  const label = () => {
    // The icon (a monitor, a sun, a moon) comes from app.css, by `data-theme`.
    button.replaceChildren(Object.assign(document.createElement('span'), { className: 'label', textContent: theme }));
    button.setAttribute('aria-label', `Colour theme: ${theme}`);
    button.title = `Colour theme: ${theme} (click to change)`;
  };
  label();
  button.addEventListener('click', () => {
    theme = ORDER[(ORDER.indexOf(theme) + 1) % ORDER.length];
    apply(theme);
    label();
    window.dispatchEvent(new Event('toolwire-theme'));
    try {
      localStorage.setItem(KEY, theme);
    } catch { /* not kept: this page only */ }
  });
}
