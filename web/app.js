// toolwire's web app, its entry: registers the MCP Apps widget and routes by path to the
// session list (`/`) or a session (`/sessions/{id}`). Each job lives in its own module
// under app/: api (HTTP client), list, session (timeline), card, feed, forms, composer,
// apphost (MCP Apps), tools.

import { h, registerWidget } from './toolwire-render.js';
import { mountApp } from './mcp-app.js';
import { ID } from './app/api.js';
import { showError } from './app/util.js';
import { listView } from './app/list.js';
import { SessionView } from './app/session.js';

export { resourceUrl } from './app/api.js';
export { schemaForm } from './app/forms.js';

// MCP Apps: drawn by the host bridge when the page lends one (a tool call's card does).
registerWidget('mcp_app', (box, widget, opts) => {
  const handle = mountApp(box, widget, opts && opts.app);
  if (opts && opts.app && opts.app.mounted) opts.app.mounted(handle);
});

async function main() {
  const main = document.getElementById('main');
  const path = location.pathname;
  const m = path.match(/^\/sessions\/([^/]+)$/);
  try {
    if (path === '/') await listView(main);
    else if (m && ID.test(m[1])) {
      const view = new SessionView(main, m[1]);
      window.toolwireView = view;
      await view.start();
    } else {
      main.replaceChildren(h('p', { class: 'error' }, 'No such page.'));
    }
  } catch (err) {
    main.replaceChildren();
    showError(main, err);
  }
  // Tests and people measuring first render read this mark.
  performance.mark('toolwire-rendered');
  document.body.dataset.ready = 'true';
}

main();
