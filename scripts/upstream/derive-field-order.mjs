#!/usr/bin/env node
// Derives the order in which a real API server writes the members of built-in objects
// (devcluster/upstream/fieldorder.json) from the round-trip fixtures of the kubernetes/api
// repository (`testdata/HEAD/<group>.<version>.<Kind>.json`, tag v0.32.13 = Kubernetes 1.32).
//
// The server encodes built-in objects from Go structs, so members come in struct field order. The
// fixtures are encoded by Go with every field set, so their member order is that order: each
// fixture is walked alongside its OpenAPI definition (devcluster/upstream/swagger.json) to map every
// nested object to the definition it is an instance of. Definitions no fixture reaches keep the
// OpenAPI document's property order (alphabetical), with `kind`, `apiVersion`, `metadata` first for
// kinds (TypeMeta is embedded first in every kind), except the list kinds of the repository, whose Go
// declaration (`TypeMeta`, `ListMeta`, `Items`, checked in its types.go files) gives the order.
//
// Each member is written with its shape, so the devcluster needs no OpenAPI document to order an
// object: `name` (a scalar or free-form value, kept as it is), `name>Def` (an object of definition
// Def, or a list of them), `name{}` (a map: keys sorted), `name{}>Def` (a map of Def values).
//
//   node scripts/upstream/derive-field-order.mjs <kubernetes-api checkout or git dir> [--ref v0.32.13] [--check]
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as command from './command.mjs';

const folder = path.resolve(import.meta.dirname, '..', '..', 'devcluster', 'upstream');
export const TAG = 'v0.32.13';

/** Definitions whose values are free JSON (kept as written), whatever their schema says. */
const FREE = new Set([
  'io.k8s.apimachinery.pkg.runtime.RawExtension',
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1',
  'io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON',
]);

/** Definitions encoded as another one when they hold an object (Go's MarshalJSON of the `Or` types). */
const ALIASES = {
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray': 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool': 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray':
    'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps',
};

const refOf = (schema) => {
  const ref = schema?.$ref ?? schema?.allOf?.find((s) => s.$ref)?.$ref;
  if (!ref) return undefined;
  const name = ref.replace('#/definitions/', '');
  return ALIASES[name] ?? name;
};
const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A definition that has members to order (not a scalar, free JSON or an empty struct). */
function isStruct(swagger, name) {
  const def = swagger.definitions[name];
  return !!def && !FREE.has(name) && !!def.properties && Object.keys(def.properties).length > 0;
}

/** The shape of a property: `{}` per map level, `>Def` for a struct inside (lists are transparent). */
function shapeOf(swagger, schema) {
  let maps = '';
  let s = schema;
  for (;;) {
    const ref = refOf(s);
    if (ref) return isStruct(swagger, ref) ? `${maps}>${ref}` : maps;
    if (s.type === 'array' && s.items) s = s.items;
    else if (isObject(s.additionalProperties)) {
      maps += '{}';
      s = s.additionalProperties;
    } else return maps;
  }
}

/** Merges a newly seen member sequence into the known order; returns false on a contradiction. */
function mergeOrder(known, seen) {
  let last = -1;
  for (const k of seen) {
    const i = known.indexOf(k);
    if (i < 0) continue;
    if (i < last) return false;
    last = i;
  }
  seen.forEach((k, i) => {
    if (known.includes(k)) return;
    const after = i === 0 ? -1 : known.indexOf(seen[i - 1]);
    known.splice(after + 1, 0, k);
  });
  return true;
}

/** Walks a fixture value alongside its schema, recording the member order of every struct met. */
function walk(swagger, value, schema, found, problems, where) {
  const ref = refOf(schema);
  if (ref) {
    if (!isStruct(swagger, ref)) return;
    if (Array.isArray(value)) {
      value.forEach((item, i) => walk(swagger, item, { $ref: `#/definitions/${ref}` }, found, problems, `${where}[${i}]`));
      return;
    }
    if (!isObject(value)) return;
    const properties = swagger.definitions[ref].properties;
    const members = Object.keys(value);
    const known = found.get(ref);
    if (!known) found.set(ref, [...members]);
    else if (!mergeOrder(known, members)) problems.push(`${where}: the order of ${ref} contradicts another fixture`);
    for (const k of members) {
      if (!Object.hasOwn(properties, k)) problems.push(`${where}.${k}: not a property of ${ref}`);
      else walk(swagger, value[k], properties[k], found, problems, `${where}.${k}`);
    }
    return;
  }
  if (schema.type === 'array' && schema.items && Array.isArray(value)) {
    value.forEach((item, i) => walk(swagger, item, schema.items, found, problems, `${where}[${i}]`));
  } else if (isObject(schema.additionalProperties) && isObject(value)) {
    for (const [k, v] of Object.entries(value)) walk(swagger, v, schema.additionalProperties, found, problems, `${where}[${k}]`);
  }
}

/** `apps.v1.Deployment.json` → its definition, by the swagger's group-version-kind extension. */
function definitionOfFixture(byGvk, file) {
  const parts = file.replace(/\.json$/, '').split('.');
  const kind = parts.pop();
  const version = parts.pop();
  const group = parts.join('.') === 'core' ? '' : parts.join('.');
  return byGvk.get(`${group}/${version}/${kind}`);
}

/**
 * The list kinds of the repository's types.go files (`package/dir` → struct → json members), as far
 * as they are declared `TypeMeta` inline, `ListMeta` as metadata, then `Items`.
 */
export function listDeclarations(typesFiles) {
  const out = new Map();
  for (const [file, text] of Object.entries(typesFiles)) {
    const prefix = `io.k8s.api.${path.dirname(file).split('/').join('.')}.`;
    for (const m of text.matchAll(/^type (\w+List) struct \{\n([\s\S]*?)^\}/gm)) {
      const fields = m[2]
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('//'));
      const members = fields.map((l) => {
        if (/^(metav1\.)?TypeMeta\b.*json:",inline"/.test(l)) return 'TypeMeta';
        const json = /json:"([^",]*)/.exec(l);
        return json ? json[1] : `?${l}`;
      });
      out.set(prefix + m[1], members);
    }
  }
  return out;
}

/** Derives the data file from the swagger, the fixtures (`file name` → text) and the types.go files. */
export function derive(swagger, fixtures, typesFiles, source) {
  const byGvk = new Map();
  for (const [name, def] of Object.entries(swagger.definitions)) {
    for (const g of def['x-kubernetes-group-version-kind'] ?? []) {
      const key = `${g.group}/${g.version}/${g.kind}`;
      if (!byGvk.has(key)) byGvk.set(key, name);
    }
  }
  const found = new Map();
  const problems = [];
  const used = [];
  const unmatched = [];
  for (const [file, text] of Object.entries(fixtures).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const def = definitionOfFixture(byGvk, file);
    if (!def) {
      unmatched.push(file);
      continue;
    }
    used.push(file);
    walk(swagger, JSON.parse(text), { $ref: `#/definitions/${def}` }, found, problems, file);
  }
  const lists = listDeclarations(typesFiles);
  const definitions = {};
  const fromSwagger = [];
  const fromGoLists = [];
  const missingMembers = [];
  for (const name of Object.keys(swagger.definitions).sort()) {
    if (!isStruct(swagger, name)) continue;
    const properties = swagger.definitions[name].properties;
    let order = found.get(name);
    if (order) {
      const absent = Object.keys(properties).filter((p) => !order.includes(p));
      // Members the fixtures leave unset keep their place in the document's order, after the others.
      if (absent.length) missingMembers.push(`${name}: ${absent.join(', ')}`);
      order = [...order.filter((p) => Object.hasOwn(properties, p)), ...absent];
    } else if (lists.has(name) && lists.get(name).join() === 'TypeMeta,metadata,items') {
      order = ['kind', 'apiVersion', 'metadata', 'items'];
      fromGoLists.push(name);
    } else {
      // Every kind embeds TypeMeta inline first and ObjectMeta (or ListMeta) next, whatever the rest.
      const typeMeta = swagger.definitions[name]['x-kubernetes-group-version-kind'] ? ['kind', 'apiVersion', 'metadata'] : [];
      order = [...typeMeta.filter((p) => Object.hasOwn(properties, p)), ...Object.keys(properties).filter((p) => !typeMeta.includes(p))];
      fromSwagger.push(name);
    }
    definitions[name] = order.map((p) => p + shapeOf(swagger, properties[p]));
  }
  const listProblems = [...lists.entries()].filter(([name, members]) => swagger.definitions[name] && members.join() !== 'TypeMeta,metadata,items');
  for (const [name, members] of listProblems) problems.push(`${name}: list declared as ${members.join(', ')}`);
  return {
    data: {
      about:
        'Member order of built-in objects as a real API server writes them (Go struct order), derived by scripts/upstream/derive-field-order.mjs; do not edit by hand. Shapes: name>Def an object (or list) of Def, name{} a map with sorted keys.',
      source: source,
      kubernetes: '1.32',
      fixtures: used.length,
      fromGoLists: fromGoLists.length,
      fromSwagger,
      definitions,
    },
    report: { used, unmatched, fromSwagger, fromGoLists, missingMembers, problems, reached: found.size },
  };
}

/**
 * Reads the fixtures and the Go files of the repository from a checkout (its working tree) or a git
 * directory (at `ref`): `fixtures` by file name, `goFiles` and `typesFiles` (the types.go files) by
 * path.
 */
export function readRepository(repo, ref) {
  const fixtures = {};
  const goFiles = {};
  if (fs.existsSync(path.join(repo, 'testdata', 'HEAD'))) {
    const dir = path.join(repo, 'testdata', 'HEAD');
    for (const f of fs.readdirSync(dir)) if (f.endsWith('.json')) fixtures[f] = fs.readFileSync(path.join(dir, f), 'utf8');
    const walkDir = (d) => {
      for (const e of fs.readdirSync(path.join(repo, d), { withFileTypes: true })) {
        const rel = d ? `${d}/${e.name}` : e.name;
        if (e.isDirectory() && e.name !== 'testdata' && !e.name.startsWith('.')) walkDir(rel);
        else if (e.isFile() && e.name.endsWith('.go')) goFiles[rel] = fs.readFileSync(path.join(repo, rel), 'utf8');
      }
    };
    walkDir('');
  } else {
    const names = execFileSync('git', ['--git-dir', repo, 'ls-tree', '-r', '--name-only', ref], { encoding: 'utf8', maxBuffer: 64 << 20 })
      .split('\n')
      .filter((f) => /^testdata\/HEAD\/[^/]+\.json$/.test(f) || (f.endsWith('.go') && !f.includes('testdata/')));
    // One `git cat-file --batch` for all files: `<sha> blob <size>\n<content>\n` per file, in order.
    const out = execFileSync('git', ['--git-dir', repo, 'cat-file', '--batch'], { input: names.map((f) => `${ref}:${f}\n`).join(''), maxBuffer: 256 << 20 });
    let at = 0;
    for (const file of names) {
      const eol = out.indexOf(10, at);
      const size = Number(out.subarray(at, eol).toString('utf8').split(' ')[2]);
      const text = out.subarray(eol + 1, eol + 1 + size).toString('utf8');
      at = eol + 1 + size + 1;
      if (file.endsWith('.json')) fixtures[path.basename(file)] = text;
      else goFiles[file] = text;
    }
  }
  const typesFiles = Object.fromEntries(Object.entries(goFiles).filter(([f]) => /(^|\/)types\.go$/.test(f)));
  return { fixtures, goFiles, typesFiles };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { args, ref, repo } = command.repositoryArguments('derive-field-order.mjs', TAG);
  const swagger = JSON.parse(fs.readFileSync(path.join(folder, 'swagger.json'), 'utf8'));
  const { fixtures, typesFiles } = readRepository(repo, ref);
  const { data, report } = derive(swagger, fixtures, typesFiles, `kubernetes/api ${ref} testdata/HEAD`);
  const text = `${JSON.stringify(data)}\n`;
  const target = path.join(folder, 'fieldorder.json');
  console.error(
    `${report.used.length} fixtures used (${report.unmatched.length} of versions the OpenAPI document lacks), ${report.reached} definitions reached, ` +
      `${report.fromGoLists.length} list kinds from their Go declaration, ${report.fromSwagger.length} definitions in the document's order`,
  );
  for (const m of report.missingMembers) console.error(`  unset in the fixtures: ${m}`);
  for (const p of report.problems) console.error(`  problem: ${p}`);
  if (args.includes('--verbose')) for (const d of report.fromSwagger) console.error(`  document order: ${d}`);
  if (report.problems.length) process.exit(1);
  command.writeOrCheck(args, target, text, 'derive-field-order.mjs');
}
