// Shared helpers of the toolwire npm package's tests: the repository's fixture corpus,
// the `toolwire` binary to compare against, and the scale-out backends when they are up.
//
// Tests that need something outside Node (the binary, Postgres + S3) skip when it is
// missing, except in CI (CI=true), where a missing one fails the test: .ci/run provides
// them all.
'use strict';
const {spawnSync} = require('node:child_process');
const {accessSync, constants, readdirSync, readFileSync} = require('node:fs');
const {join, resolve} = require('node:path');
const {randomUUID} = require('node:crypto');

const ROOT = resolve(__dirname, '..', '..', '..');
const FIXTURES = join(ROOT, 'tests', 'fixtures');
const HOSTILE = join(ROOT, 'tests', 'hostile');

/** Skips outside CI (returns false); in CI a missing dependency fails the test. */
function need(t, what, why) {
  if (process.env.CI) throw new Error(`${what} is missing: ${why}`);
  t.skip(`${what} is missing: ${why}`);
  return false;
}

/** The recorded real payloads the Rust fixture tests run (tests/fixtures/mcp and legacy;
 * `_`-prefixed files are not payloads), and the hostile ones. */
function corpus() {
  const paths = [];
  for (const folder of [join(FIXTURES, 'mcp'), join(FIXTURES, 'legacy'), HOSTILE]) {
    paths.push(
      ...readdirSync(folder)
        .filter((n) => n.endsWith('.json') && !n.startsWith('_'))
        .sort()
        .map((n) => join(folder, n)),
    );
  }
  return paths;
}

const load = (path) => JSON.parse(readFileSync(path, 'utf8'));

/** The toolwire binary: $TOOLWIRE_BIN, else the debug build in $CARGO_TARGET_DIR or the
 * repository's target/; null when there is none. */
function cliPath() {
  const candidates = [process.env.TOOLWIRE_BIN];
  if (process.env.CARGO_TARGET_DIR) candidates.push(join(process.env.CARGO_TARGET_DIR, 'debug', 'toolwire'));
  candidates.push(join(ROOT, 'target', 'debug', 'toolwire'));
  for (const c of candidates) {
    if (!c) continue;
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {}
  }
  return null;
}

/** The binary's stdout, stderr and exit code; colour off as for any pipe. */
function runCli(cli, args, stdin) {
  const done = spawnSync(cli, args, {
    input: stdin,
    env: {...process.env, NO_COLOR: '1'},
    maxBuffer: 256 * 1024 * 1024,
    timeout: 120_000,
  });
  return {out: done.stdout.toString('utf8'), err: done.stderr.toString('utf8'), code: done.status};
}

/** [name, Store.open options] for every backend this machine runs: SQLite + a blob
 * directory always, Postgres + S3 when tests/services/start has exported their URLs (each
 * run under an S3 prefix of its own; sessions have unique ids). */
function backends(dataDir) {
  const out = [['sqlite+file', {dataDir}]];
  const pg = process.env.TOOLWIRE_TEST_POSTGRES_URL;
  const s3 = process.env.TOOLWIRE_TEST_S3_URL;
  if (!pg || !s3) {
    if (process.env.CI) {
      throw new Error(
        'TOOLWIRE_TEST_POSTGRES_URL / TOOLWIRE_TEST_S3_URL are not set: CI must run the store on Postgres + S3 (eval "$(tests/services/start)")',
      );
    }
    return out;
  }
  const [base, query = ''] = s3.split('?', 2);
  const prefix = 'node' + randomUUID().replaceAll('-', '').slice(0, 12);
  out.push(['postgres+s3', {databaseUrl: pg, blobUrl: `${base.replace(/\/+$/, '')}/${prefix}?${query}`}]);
  return out;
}

module.exports = {ROOT, FIXTURES, HOSTILE, need, corpus, load, cliPath, runCli, backends};
