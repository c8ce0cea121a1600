// The first script of the app's page, with no imports: it asks for the session the page
// shows, the server's info, and the tools and servers, at once, while the app's modules
// are still loading, and leaves the answers for api.js to take (each once). A first render
// then waits for the slowest of them, not for one after the other. The session's calls
// waiting for a person are asked for as soon as the session's answer starts to arrive:
// after the server has read the session (it answers only once the whole body is made), so
// no call it lists is older than the session, and while the session's body still
// downloads and is parsed.

const early = new Map();
const get = (path) => {
  const answer = fetch(path, { credentials: 'same-origin' }).then((r) => {
    // The body is parsed as soon as it is here (`api.js` takes `r.parsed`): a long
    // session's JSON is read while the modules still load, not after they ran.
    r.parsed = r.json();
    r.parsed.catch(() => {});
    return r;
  });
  answer.catch(() => {});
  early.set(path, answer);
  return answer;
};
// The id rule of wire.js (ID), repeated: this script imports nothing.
const m = location.pathname.match(/^\/sessions\/([^/]+)$/);
if (m && /^(?!.*\.\.)[A-Za-z0-9._~-]{1,256}$/.test(m[1])) {
  get(`/api/sessions/${m[1]}`).then((r) => { if (r.ok) get(`/api/sessions/${m[1]}/suspensions`); }, () => {});
  get('/api/info');
}
// Every page's sidebar and the session's cards need the tools and their servers first.
get('/api/tools');
get('/api/servers');
window.toolwireEarly = early;
