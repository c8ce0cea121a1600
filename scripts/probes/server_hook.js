// Stamps a Node.js MCP server's own time per request: each stdin chunk it is handed and
// each stdout write it makes, with performance.now(), into /tmp/hooklog/PID.log (only for
// a process whose arguments name server-everything). Loaded with `node --require`, e.g. a
// `node` first in PATH that runs `exec /usr/bin/node --require THIS "$@"`. See README.md.
const { performance } = require('perf_hooks');
const fs = require('fs');
if (process.argv.some((a) => a.includes('server-everything'))) {
  fs.mkdirSync('/tmp/hooklog', { recursive: true });
  const fd = fs.openSync(`/tmp/hooklog/${process.pid}.log`, 'w');
  let buf = [];
  const flush = () => {
    if (buf.length) {
      fs.writeSync(fd, buf.join(''));
      buf = [];
    }
  };
  const line = (dir, chunk) =>
    `${dir} ${performance.now().toFixed(4)} ${chunk.length} ${String(chunk).slice(0, 300).replace(/\n/g, ' ')}\n`;
  // The transport's 'data' listener, wrapped: the stamp is taken before the server sees it.
  const on = process.stdin.on.bind(process.stdin);
  process.stdin.on = function (ev, fn) {
    if (ev === 'data') {
      const inner = fn;
      fn = function (d) {
        buf.push(line('in', d));
        return inner.apply(this, arguments);
      };
    }
    return on(ev, fn);
  };
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = function (chunk, ...rest) {
    buf.push(line('out', chunk));
    // Written in batches; a SIGKILLed server loses at most its last hundred lines.
    if (buf.length > 100) flush();
    return write(chunk, ...rest);
  };
  process.on('exit', flush);
  process.on('SIGTERM', () => {
    flush();
    process.exit(0);
  });
}
