// toolwire's web app, its entry: registers the MCP Apps widget, starts the shell (theme,
// sidebar of sessions and of servers and tools) and routes by path to the session list
// (`/`) or a session (`/sessions/{id}`). Each job lives in its own module under app/:
// api (HTTP client), list, session (timeline), card, feed, filters, keys, forms, composer,
// apphost (MCP Apps), export (the Export menu), tools (tools and servers), sidebar, theme.

import { h, registerWidget } from './toolwire-render.js';
import { mountApp } from './mcp-app.js';
import { ID, resourceUrl } from './app/api.js';
import { showError } from './app/util.js';
import { listView } from './app/list.js';
import { SessionView } from './app/session.js';
import { Catalogue } from './app/tools.js';
import { Sidebar } from './app/sidebar.js';
import { initTheme } from './app/theme.js';
import { showKeys } from './app/keys.js';

export { resourceUrl } from './app/api.js';
export { schemaForm } from './app/forms.js';

// MCP Apps: drawn by the host bridge when the page lends one (a tool call's card does).
// An app's HTML is stored once, by its content (`htmlBlob`), and read when it is drawn;
// results stored before that carry it inline (`html`). HTML that cannot be read leaves
// the app's fallback text.
registerWidget('mcp_app', (box, widget, opts) => {
  const mount = (shown) => {
    const handle = mountApp(box, shown, opts && opts.app);
    if (opts && opts.app && opts.app.mounted) opts.app.mounted(handle);
  };
  const app = (widget && widget.app) || {};
  const url = typeof app.html === 'string' ? null : resourceUrl(app.htmlBlob);
  if (!url) return mount(widget);
  fetch(url, { credentials: 'same-origin' })
    .then((r) => (r.ok ? r.text() : null))
    .catch(() => null)
    .then((html) => mount(html === null ? widget : { ...widget, app: { ...app, html } }));
});

async function main() {
  const main = document.getElementById('main');
  const path = location.pathname;
  const m = path.match(/^\/sessions\/([^/]+)$/);
  const session = m && ID.test(m[1]) ? m[1] : null;
  initTheme();
  const keys = document.getElementById('keys');
  if (keys) keys.onclick = showKeys;
  const catalogue = new Catalogue();
  const ready = catalogue.start();
  ready.catch(() => {});
  let view = null;
  let built = null;
  // A page that cannot be shown says why in place of its content.
  const failed = (err) => {
    main.replaceChildren();
    showError(main, err);
  };
  const sidebar = new Sidebar(document.getElementById('sidebar'), catalogue, {
    sessions: !!session,
    current: session,
    onTool: session ? (name) => view && view.pickTool && view.pickTool(name) : null,
  });
  // The sidebar fills beside the page, and never holds it up.
  ready.then(() => sidebar.start(), () => sidebar.start());
  try {
    if (path === '/') await listView(main);
    else if (session) {
      view = new SessionView(main, session, catalogue);
      window.toolwireView = view;
      // The sidebar's counts of this session follow its feed, not only its slow poll.
      view.onCounts = () => { if (sidebar.sessionList) sidebar.loadSessions(); };
      await view.start(ready);
      view.fillFirst();
      built = view.built;
    } else {
      main.replaceChildren(h('p', { class: 'error' }, 'No such page.'));
    }
  } catch (err) {
    failed(err);
  }
  // What shows first is laid out before the mark, as the static page that `scripts/bench`
  // compares with is: the mark is when a person could see it, not when script was done.
  void document.body.offsetHeight;
  // Tests and people measuring first render read this mark. `body[data-ready]` waits for
  // the pending calls' controls (asked for once the session's answer arrives: a second
  // round trip the first screen does not wait for) and the rest of a long session's
  // timeline, made in idle slices after it (tests read every card).
  performance.mark('toolwire-rendered');
  if (view) view.rendered();
  if (view && view.settled) {
    await view.settled.catch(failed);
  }
  if (built) await built.catch(() => {});
  performance.mark('toolwire-built');
  document.body.dataset.ready = 'true';
}

main();
