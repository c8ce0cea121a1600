#!/usr/bin/env node
// Generates web/toolwire.d.ts (and the same declarations as bindings/node/toolwire.d.ts,
// which the npm package's index.d.ts imports), and the event types and the id rule the
// page uses as web/app/wire.js, from schema/toolwire.schema.json.
//
//   node gen.mjs          write ../../web/toolwire.d.ts
//   node gen.mjs --check  exit 1 if the file on disk is not what this script generates,
//                         then type-check it (and sample.ts) with `tsc --noEmit --strict`
//
// The output depends only on the schema and the versions pinned in package-lock.json
// (no timestamps, no absolute paths), so --check is a plain byte comparison.

import {spawnSync} from 'node:child_process';
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs';
import {dirname, join, relative} from 'node:path';
import {fileURLToPath} from 'node:url';
import {compile} from 'json-schema-to-typescript';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const schemaPath = join(repo, 'schema', 'toolwire.schema.json');
const outPath = join(repo, 'web', 'toolwire.d.ts');
const nodeTypesPath = join(repo, 'bindings', 'node', 'toolwire.d.ts');
const wirePath = join(repo, 'web', 'app', 'wire.js');
const samplePath = join(here, 'sample.ts');
const rel = (p) => relative(repo, p).split('\\').join('/');
const REGEN = 'cd tests/web-types && node gen.mjs';

const jsttVersion = JSON.parse(
  readFileSync(join(here, 'node_modules', 'json-schema-to-typescript', 'package.json'), 'utf8'),
).version;

const BANNER = `/**
 * TypeScript declarations for toolwire's wire format (\`ToolResult\` and everything in it).
 *
 * GENERATED FILE - DO NOT EDIT BY HAND.
 * Generated from schema/toolwire.schema.json by tests/web-types/gen.mjs
 * (json-schema-to-typescript ${jsttVersion}). After changing the schema, run:
 *
 *   ${REGEN}
 *
 * \`tests/web-types/run\` fails while this file is out of date.
 */`;

// Keywords that say nothing about a value's type.
const ANNOTATION_ONLY = new Set(['description', 'title', 'default', 'examples', 'deprecated', '$comment', 'readOnly', 'writeOnly']);

/**
 * json-schema-to-typescript turns a property schema that has only a description (any JSON in
 * JSON Schema, e.g. `Suspension.inputSchema`, `WidgetApp.csp`) into `{[k: string]: unknown}`.
 * Mark such schemas `tsType: "unknown"` so they come out as `unknown`, like `true` does.
 */
function anyJsonToUnknown(node) {
  if (Array.isArray(node)) {
    node.forEach(anyJsonToUnknown);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  if (node.properties && typeof node.properties === 'object') {
    for (const [key, sub] of Object.entries(node.properties)) {
      if (sub && typeof sub === 'object' && !Array.isArray(sub) && Object.keys(sub).every((k) => ANNOTATION_ONLY.has(k))) {
        node.properties[key] = {...sub, tsType: 'unknown'};
      }
    }
  }
  for (const value of Object.values(node)) anyJsonToUnknown(value);
}

/**
 * A field's doc comment lands beside its `$ref` (`{"$ref": "#/$defs/Status", "description":
 * …}`), and json-schema-to-typescript then copies the referenced type under a new name
 * (`ToolResult1`, `status: "success" | …`) instead of naming it. The referenced type keeps
 * its own description; drop the field's so the declaration says `status: Status`.
 */
function refsStayNamed(node) {
  if (Array.isArray(node)) {
    node.forEach(refsStayNamed);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  if (typeof node.$ref === 'string') {
    delete node.description;
    delete node.title;
  }
  for (const value of Object.values(node)) refsStayNamed(value);
}

/**
 * The schema types `Value.data` per well-known kind with `allOf: [{if: {kind: const}, then:
 * {data: $ref}}]`, which json-schema-to-typescript ignores (`Value.data` is `unknown`). Read
 * those rules and declare the mapping, plus a union narrowed by `kind`.
 */
function knownKinds(schema) {
  const defs = schema.$defs ?? schema.definitions ?? {};
  const rules = defs.Value?.allOf ?? [];
  const map = [];
  for (const rule of rules) {
    const kind = rule?.if?.properties?.kind?.const;
    const ref = rule?.then?.properties?.data?.$ref;
    if (typeof kind !== 'string' || typeof ref !== 'string') {
      throw new Error(`gen.mjs: unrecognised rule in $defs.Value.allOf: ${JSON.stringify(rule)}`);
    }
    const name = ref.replace(/^#\/(\$defs|definitions)\//, '');
    if (!(name in defs)) throw new Error(`gen.mjs: $defs.Value.allOf refers to missing ${ref}`);
    map.push([kind, name]);
  }
  if (map.length === 0) return '';
  const entries = map.map(([kind, name]) => `  ${/^[A-Za-z_$][\w$]*$/.test(kind) ? kind : JSON.stringify(kind)}: ${name};`).join('\n');
  return `
/**
 * The \`data\` type of each well-known kind, from the \`if\`/\`then\` rules on \`Value\` in the
 * schema (\`Value.data\` itself is \`unknown\`: custom kinds carry any JSON). A well-known
 * kind's \`data\` may carry extra fields; they are kept on the wire but not declared here.
 */
export interface KnownKindData {
${entries}
}
/**
 * A \`Value\` of a well-known kind, with \`data\` typed; narrow it with \`switch (value.kind)\`.
 * A \`Value\` from the wire is not checked: test \`kind\` before treating it as a \`KnownValue\`.
 */
export type KnownValue = {
  [K in keyof KnownKindData]: Value & {kind: K; data: KnownKindData[K]};
}[keyof KnownKindData];
/**
 * The well-known kinds that have a typed \`data\`.
 */
export type KnownKind = keyof KnownKindData;
`;
}

/**
 * An object with both `properties` and `oneOf` (an internally tagged enum flattened into a
 * struct, as `Event` is) means "these fields and one of those", but json-schema-to-typescript
 * keeps only the `oneOf`. Say the same as `allOf` of the two, which it writes as an
 * intersection.
 */
function taggedUnionsAsIntersections(defs) {
  for (const [name, def] of Object.entries(defs)) {
    if (!def || !def.properties || !Array.isArray(def.oneOf)) continue;
    const {oneOf, properties, required, type, ...rest} = def;
    defs[name] = {...rest, allOf: [{type: 'object', properties, required: required ?? []}, {oneOf}]};
  }
}

/** The event types of the feeds (`Event`'s `type` consts), for the page's listeners. */
export function eventTypes(schema) {
  const event = (schema.$defs ?? {}).Event;
  const types = (event?.oneOf ?? []).map((v) => v?.properties?.type?.const);
  if (!types.length || types.some((t) => typeof t !== 'string')) {
    throw new Error('gen.mjs: $defs.Event has no oneOf of objects with a const type');
  }
  return types;
}

async function generate() {
  const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
  const defs = schema.$defs ?? schema.definitions ?? {};
  const rootName = schema.title ?? 'ToolResult';
  const prepared = structuredClone(schema);
  anyJsonToUnknown(prepared);
  refsStayNamed(prepared);
  taggedUnionsAsIntersections(prepared.$defs ?? {});

  let ts = await compile(prepared, rootName, {
    bannerComment: BANNER,
    // Export every definition, referenced or not.
    unreachableDefinitions: true,
    // Objects are closed unless the schema says `additionalProperties: true` (as it does for
    // the open ones: Metadata, Annotations, `_meta`, table rows). This is what serde emits.
    additionalProperties: false,
    unknownAny: true,
    strictIndexSignatures: false,
    enableConstEnums: false,
    format: true,
    cwd: dirname(schemaPath),
  });
  ts = ts.replace(/\r\n/g, '\n').trimEnd() + '\n' + knownKinds(schema);
  if (!ts.endsWith('\n')) ts += '\n';

  // Every definition must come out as an exported type under its own name.
  const missing = [rootName, ...Object.keys(defs)].filter(
    (name) => !new RegExp(`^export (?:type|interface) ${name}\\b`, 'm').test(ts),
  );
  if (missing.length) {
    throw new Error(`gen.mjs: generated declarations lack exported type(s): ${missing.join(', ')}`);
  }
  return ts;
}

function firstDifference(a, b) {
  const la = a.split('\n');
  const lb = b.split('\n');
  for (let i = 0; i < Math.max(la.length, lb.length); i++) {
    if (la[i] !== lb[i]) {
      return `first difference at line ${i + 1}:\n  on disk:   ${JSON.stringify(la[i] ?? '<end of file>')}\n  generated: ${JSON.stringify(lb[i] ?? '<end of file>')}`;
    }
  }
  return '';
}

function typecheck() {
  const bin = join(here, 'node_modules', '.bin', process.platform === 'win32' ? 'tsc.cmd' : 'tsc');
  // The renderer's own types and a page using them, beside the wire types.
  const render = [join(repo, 'web', 'toolwire-render.d.ts'), join(here, 'render-sample.ts')].map(rel);
  const args = ['--noEmit', '--strict', '--pretty', 'false', '--target', 'es2022', '--module', 'nodenext', rel(outPath), rel(samplePath), ...render];
  const r = spawnSync(bin, args, {cwd: repo, encoding: 'utf8'});
  if (r.error) throw r.error;
  if (r.status !== 0) {
    process.stderr.write(r.stdout + r.stderr);
    console.error(`\ntsc --noEmit --strict failed on ${rel(outPath)} / ${rel(samplePath)} (exit ${r.status}).`);
    process.exit(1);
  }
  console.log(`ok: tsc --noEmit --strict passes on ${rel(outPath)}, ${rel(samplePath)} and ${render.join(', ')}`);
}

/** `web/app/wire.js`: the feed's event types and the id rule, for the page's script. */
function wireModule() {
  const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
  const list = eventTypes(schema).map((t) => `  '${t}',`).join('\n');
  const pattern = schema.$defs?.SessionId?.pattern;
  if (typeof pattern !== 'string') throw new Error('gen.mjs: $defs.SessionId has no pattern');
  return `// What the page's script needs of the wire format at run time, from
// schema/toolwire.schema.json: the event types of the feeds (the SSE event names) and the
// one rule every id follows (toolwire_core::check_id).
//
// GENERATED FILE - DO NOT EDIT BY HAND. Generated by tests/web-types/gen.mjs; after changing
// the schema, run: ${REGEN}
export const EVENT_TYPES = Object.freeze([
${list}
]);

export const ID = new RegExp(${JSON.stringify(pattern)});
`;
}

const args = process.argv.slice(2);
const unknown = args.filter((a) => a !== '--check');
if (unknown.length) {
  console.error(`usage: node gen.mjs [--check]  (unknown argument: ${unknown.join(' ')})`);
  process.exit(2);
}
const types = await generate();
const outputs = [[outPath, types], [nodeTypesPath, types], [wirePath, wireModule()]];

if (args.includes('--check')) {
  for (const [path, generated] of outputs) {
    const onDisk = existsSync(path) ? readFileSync(path, 'utf8') : null;
    if (onDisk !== generated) {
      console.error(
        onDisk === null
          ? `${rel(path)} does not exist.`
          : `${rel(path)} is out of date with ${rel(schemaPath)} (or was edited by hand); ${firstDifference(onDisk, generated)}`,
      );
      console.error(`\nRegenerate it with:\n\n  ${REGEN}\n\nand commit the result.`);
      process.exit(1);
    }
    console.log(`ok: ${rel(path)} is up to date with ${rel(schemaPath)}`);
  }
  typecheck();
} else {
  for (const [path, generated] of outputs) {
    mkdirSync(dirname(path), {recursive: true});
    const before = existsSync(path) ? readFileSync(path, 'utf8') : null;
    writeFileSync(path, generated);
    console.log(before === generated ? `${rel(path)} unchanged` : `wrote ${rel(path)}`);
  }
}
