// The HTTP API client of the web app: one fetch wrapper whose error answers become Errors,
// the id and blob-key shapes the page trusts, and stored blobs' URLs.

/** A session or suspension id the page will put in a URL: toolwire's one id rule,
 * generated from the Rust types. */
export { ID } from './wire.js';
/** A stored blob's key: only these get a URL on this server. */
export const BLOB = /^blake3:[0-9a-f]{64}$/;

/** A URL for a stored blob; anything that is not a blob key gets no URL. */
export function resourceUrl(ref) {
  const key = typeof ref === 'string' ? ref : ref && (ref.blob || ref.uri);
  return BLOB.test(key || '') ? `/api/resources/${key}/content` : null;
}

/** Calls the API; an error answer becomes an Error carrying its message and status. */
export async function api(path, options = {}) {
  const init = { credentials: 'same-origin', headers: {}, ...options };
  if (options.json !== undefined) {
    init.method = init.method || 'POST';
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(options.json);
  }
  // A GET boot.js already sent (the page's session, the server's info) is taken, once.
  const early = !options.json && !options.method && window.toolwireEarly && window.toolwireEarly.get(path);
  if (early) window.toolwireEarly.delete(path);
  const r = await (early || fetch(path, init));
  if (r.status === 204) return null;
  const body = await (r.parsed || r.json()).catch(() => null);
  if (!r.ok) {
    const msg = body && body.error ? body.error.message : `${r.status} ${r.statusText}`;
    const err = new Error(msg);
    err.status = r.status;
    throw err;
  }
  return body;
}
