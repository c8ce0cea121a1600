// The one header a host's entry adds, for a client that cannot add it: the official
// conformance suite connects to a bare URL (its `server` command has no option for
// headers), while `toolwire gateway --http` answers 401 to any request without its token.
// Listens on loopback, forwards every request to the gateway with `Authorization: Bearer`
// and the token read from TOKEN_FILE (a path, so the token is not on the command line),
// and streams both ways unchanged otherwise (event streams included). Prints its own
// /mcp URL on stdout once it listens.
//
//   node auth-proxy.mjs http://127.0.0.1:PORT/mcp TOKEN_FILE
import { readFileSync } from 'node:fs';
import http from 'node:http';

const [target, tokenFile] = process.argv.slice(2);
const upstream = new URL(target);
const token = readFileSync(tokenFile, 'utf8').split('\n')[0].trim();

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, host: upstream.host, authorization: `Bearer ${token}` };
  const forward = http.request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
    (answer) => {
      res.writeHead(answer.statusCode, answer.statusMessage, answer.rawHeaders);
      answer.pipe(res);
    },
  );
  forward.on('error', (e) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`auth-proxy: ${e.message}`);
  });
  // A client that goes away closes its request upstream too (an open event stream).
  res.on('close', () => forward.destroy());
  req.pipe(forward);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${server.address().port}${upstream.pathname}\n`);
});
