#!/usr/bin/env node
// The package's install step (`npm install ./bindings/node`): builds the native addon from
// this checkout with cargo (the user has a Rust toolchain) unless it is already there, and
// copies the browser renderer (web/) in for the `toolwire/render` export.
//
// TOOLWIRE_NODE_PROFILE=dev builds the dev profile (CI: its dependency builds are the ones
// `cargo test --workspace` made in $CARGO_TARGET_DIR); the default is release. The addon
// goes where napi-rs's loader (index.js) looks first: toolwire.<platform>.node beside it.
'use strict';
const {spawnSync} = require('node:child_process');
const {copyFileSync, cpSync, existsSync, mkdirSync} = require('node:fs');
const {join} = require('node:path');

const here = __dirname;
const repo = join(here, '..', '..');

function copyRenderer() {
  const web = join(repo, 'web');
  if (!existsSync(join(web, 'toolwire-render.js'))) return; // an installed tarball has it
  const out = join(here, 'web');
  mkdirSync(out, {recursive: true});
  for (const file of ['toolwire-render.js', 'toolwire-render.d.ts', 'toolwire-render.css', 'toolwire.d.ts']) {
    copyFileSync(join(web, file), join(out, file));
  }
  for (const dir of ['render', 'vendor']) cpSync(join(web, dir), join(out, dir), {recursive: true});
}

function platformName() {
  const {platform, arch} = process;
  if (platform === 'linux') {
    const musl = !process.report?.getReport?.().header?.glibcVersionRuntime;
    return `linux-${arch}-${musl ? 'musl' : 'gnu'}`;
  }
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

function buildAddon() {
  const addon = join(here, `toolwire.${platformName()}.node`);
  if (existsSync(addon) && !process.env.TOOLWIRE_NODE_REBUILD) return;
  const profile = process.env.TOOLWIRE_NODE_PROFILE || 'release';
  const cargo = process.env.CARGO || 'cargo';
  const done = spawnSync(cargo, ['build', '--lib', '--profile', profile, '--manifest-path', join(here, 'Cargo.toml')], {
    stdio: 'inherit',
  });
  if (done.status !== 0) {
    console.error(`toolwire: cargo build failed (exit ${done.status ?? done.signal}); a Rust toolchain is needed to install from a checkout`);
    process.exit(1);
  }
  const target = process.env.CARGO_TARGET_DIR || join(here, 'target');
  const dir = join(target, profile === 'dev' ? 'debug' : profile);
  const lib = {darwin: 'libtoolwire_node.dylib', win32: 'toolwire_node.dll'}[process.platform] || 'libtoolwire_node.so';
  copyFileSync(join(dir, lib), addon);
}

copyRenderer();
buildAddon();
