#!/usr/bin/env node
// Writes index.js and index.d.ts as `napi build --platform --dts index.d.ts --js index.js`
// does, from a `cargo check` instead of a build: CI checks that the committed files are
// what napi-rs generates. `napi build` always passes cargo `--target`, which puts the
// whole tree under target/<triple>/ apart from every other build of the same target dir:
// on CI's cold cache that was 265 crates built again (2m41s) for two generated text files.
// The type definitions come from napi-derive's macros, which write them while the crate
// compiles (a check is enough); the files are then made by @napi-rs/cli's own exported
// generateTypeDef and writeJsBinding, with the options its build passes for this package
// (no WASI targets, the root loader with the platform suffix).
// Needs: `npm ci` here (@napi-rs/cli), cargo. Honours CARGO_TARGET_DIR.
import {spawnSync} from 'node:child_process';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {dirname, join} from 'node:path';
import {fileURLToPath} from 'node:url';
import {generateTypeDef, readNapiConfig, writeJsBinding} from '@napi-rs/cli';

const here = dirname(fileURLToPath(import.meta.url));
const config = await readNapiConfig(join(here, 'package.json'));
const typeDefDir = mkdtempSync(join(tmpdir(), 'toolwire-napi-typedef-'));
try {
  // napi-build's build script reruns (and so the crate recompiles and its macros write the
  // definitions) when either variable changes; the second makes every run a change.
  const checked = spawnSync('cargo', ['check', '--quiet', '--lib', '--manifest-path', join(here, 'Cargo.toml')], {
    stdio: 'inherit',
    env: {
      ...process.env,
      NAPI_TYPE_DEF_TMP_FOLDER: typeDefDir,
      NAPI_FORCE_BUILD_TOOLWIRE_NODE: String(Date.now()),
    },
  });
  if (checked.status !== 0) {
    console.error(`generate.mjs: cargo check failed (exit ${checked.status ?? checked.signal})`);
    process.exit(1);
  }
  const {exports, dts} = await generateTypeDef({
    typeDefDir,
    configDtsHeader: config.dtsHeader,
    configDtsHeaderFile: config.dtsHeaderFile,
    constEnum: config.constEnum,
    runtimeStringEnum: config.runtimeStringEnum,
    cwd: here,
    // `napi build --platform` with a JS binding and no WASI flavour declares the binding
    // target whenever anything is exported.
    declareBindingTarget: (names) => names.length > 0,
  });
  if (exports.length === 0) {
    console.error('generate.mjs: napi-derive wrote no type definitions (was the crate compiled?)');
    process.exit(1);
  }
  writeFileSync(join(here, 'index.d.ts'), dts);
  await writeJsBinding({
    platform: true,
    idents: exports,
    jsBinding: 'index.js',
    binaryName: config.binaryName,
    packageName: config.packageName,
    version: config.packageJson.version,
    outputDir: here,
    wasiFlavors: [],
  });
} finally {
  rmSync(typeDefDir, {recursive: true, force: true});
}
