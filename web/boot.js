// The first script of the app's page, with no imports: it asks for the session the page
// shows (and the server's info) at once, while the app's modules are still loading, and
// leaves the answers for api.js to take (each once). A first render then waits for the
// slower of the two, not for one after the other.

const early = new Map();
const get = (path) => {
  const answer = fetch(path, { credentials: 'same-origin' });
  answer.catch(() => {});
  early.set(path, answer);
};
// The id rule of wire.js (ID), repeated: this script imports nothing.
const m = location.pathname.match(/^\/sessions\/([^/]+)$/);
if (m && /^(?!.*\.\.)[A-Za-z0-9._~-]{1,256}$/.test(m[1])) {
  get(`/api/sessions/${m[1]}`);
  get('/api/info');
}
window.toolwireEarly = early;
