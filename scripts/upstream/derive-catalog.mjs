#!/usr/bin/env node
// Derives the devcluster's catalog of built-in resources (devcluster/upstream/catalog.json) from
// the Kubernetes OpenAPI document kept beside it (devcluster/upstream/swagger.json) and the few
// discovery facts the document does not carry (devcluster/upstream/names.json); and the schemas'
// shapes (devcluster/upstream/shapes.tsv: one definition per line, `name<TAB>schema` without
// descriptions), which decoding and validation read one definition at a time.
//
// A vanilla 1.32 cluster serves exactly the stable group/versions (v1, v2, …) of the document: every
// alpha and beta API of 1.32 is off by default. Each resource's scope, verbs, kind, schema and
// subresources come from the document's paths and their `x-kubernetes-action` and
// `x-kubernetes-group-version-kind` extensions. Run it after replacing swagger.json:
//   node scripts/upstream/derive-catalog.mjs          (writes catalog.json and shapes.tsv)
//   node scripts/upstream/derive-catalog.mjs --check  (exits 1 when either is out of date)
import * as fs from 'node:fs';
import * as path from 'node:path';

const folder = path.resolve(import.meta.dirname, '..', '..', 'devcluster', 'upstream');

/** Maps an operation to its discovery verb; connect operations map by HTTP method. */
function verbOf(method, action) {
  if (action === 'connect') return { get: 'get', post: 'create', put: 'update', patch: 'patch', delete: 'delete' }[method];
  return {
    get: 'get',
    list: 'list',
    watch: 'watch',
    watchlist: 'watch',
    post: 'create',
    put: 'update',
    patch: 'patch',
    delete: 'delete',
    deletecollection: 'deletecollection',
  }[action];
}

/** Splits a path into group, version, namespaced flag, resource, name flag and subresource. */
function parse(p) {
  const m = /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))\/(watch\/)?(namespaces\/\{namespace\}\/)?([^/{]+)(?:\/\{name\}(?:\/([^/{]+))?)?(\/\{path\})?$/.exec(p);
  if (!m) return undefined;
  const [, coreVersion, group = '', groupVersion, watch, namespaced, resource, sub, proxyPath] = m;
  if (proxyPath) return undefined;
  return { group, version: coreVersion ?? groupVersion, watch: !!watch, namespaced: !!namespaced, resource, named: p.includes('{name}'), sub };
}

const stable = (version) => /^v\d+$/.test(version);
const refName = (schema) => schema?.$ref?.replace('#/definitions/', '');

export function derive(swagger, names) {
  const byKey = new Map();
  const entry = (group, version, resource) => {
    const key = `${group}/${version}/${resource}`;
    if (!byKey.has(key)) byKey.set(key, { group, version, resource, namespaced: false, verbs: new Set(), subs: new Map() });
    return byKey.get(key);
  };
  for (const [p, item] of Object.entries(swagger.paths)) {
    const at = parse(p);
    if (!at || !stable(at.version)) continue;
    // `/api/v1/namespaces/{name}` is the Namespace object itself, not a namespaced collection.
    if (at.group === '' && at.resource === 'namespaces' && !at.namespaced) {
      // handled below like any cluster-scoped resource
    }
    for (const [method, op] of Object.entries(item)) {
      if (method === 'parameters') continue;
      const action = op['x-kubernetes-action'];
      const verb = verbOf(method, action);
      if (!verb) continue;
      const e = entry(at.group, at.version, at.resource);
      const gvk = op['x-kubernetes-group-version-kind'];
      const response = refName(op.responses?.['200']?.schema ?? op.responses?.['201']?.schema);
      if (at.sub) {
        const sub = e.subs.get(at.sub) ?? { verbs: new Set(), connect: action === 'connect' };
        sub.verbs.add(verb);
        if (gvk && !sub.kind) sub.gvk = gvk;
        if (response && action !== 'connect' && !sub.definition) sub.definition = response;
        e.subs.set(at.sub, sub);
        continue;
      }
      if (at.namespaced) e.namespaced = true;
      e.verbs.add(at.watch ? 'watch' : verb);
      if (gvk && !e.gvk && action !== 'deletecollection') e.gvk = gvk;
      const body = refName((op.parameters ?? []).find((x) => x.in === 'body')?.schema);
      if (!e.definition && (action === 'get' || action === 'post') && (response || body)) e.definition = action === 'get' ? response : body;
    }
  }
  const out = [];
  for (const e of byKey.values()) {
    if (!e.gvk || !e.definition) throw new Error(`no kind or schema found for ${e.group}/${e.version}/${e.resource}`);
    const named = e.group ? `${e.group}/${e.resource}` : e.resource;
    const subresources = [...e.subs.entries()]
      .filter(([sub]) => !names.disabledSubresources[`${e.resource}/${sub}`])
      .map(([sub, s]) => {
        const r = { name: sub, verbs: [...s.verbs].sort() };
        const kind = s.gvk ?? e.gvk;
        if (kind.group !== e.gvk.group || kind.version !== e.gvk.version) Object.assign(r, { group: kind.group, version: kind.version });
        r.kind = kind.kind;
        if (s.connect) r.connect = true;
        else if (s.definition && s.definition !== e.definition) r.definition = s.definition;
        return r;
      })
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    out.push({
      group: e.group,
      version: e.version,
      resource: e.resource,
      kind: e.gvk.kind,
      singular: e.gvk.kind.toLowerCase(),
      namespaced: e.namespaced,
      verbs: [...e.verbs].sort(),
      shortNames: names.shortNames[named] ?? [],
      categories: names.categories[named] ?? [],
      definition: e.definition,
      subresources,
    });
  }
  out.sort((a, b) => (a.group + '/' + a.version + '/' + a.resource < b.group + '/' + b.version + '/' + b.resource ? -1 : 1));
  return { about: 'Derived from swagger.json and names.json by scripts/upstream/derive-catalog.mjs; do not edit by hand.', kubernetes: '1.32', resources: out };
}

/**
 * A schema without its descriptions (decoding and validation never read them). Members of a
 * `properties` map are field names, kept whatever they are called (JSONSchemaProps has a field
 * named `description`).
 */
function shape(value, isPropertyMap = false) {
  if (Array.isArray(value)) return value.map((v) => shape(v));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => isPropertyMap || k !== 'description')
      .map(([k, v]) => [k, isPropertyMap ? shape(v) : shape(v, k === 'properties')]),
  );
}

export function deriveShapes(swagger) {
  const lines = Object.keys(swagger.definitions)
    .sort()
    .map((name) => `${name}\t${JSON.stringify(shape(swagger.definitions[name]))}`);
  return `${lines.join('\n')}\n`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const swagger = JSON.parse(fs.readFileSync(path.join(folder, 'swagger.json'), 'utf8'));
  const names = JSON.parse(fs.readFileSync(path.join(folder, 'names.json'), 'utf8'));
  const outputs = {
    'catalog.json': `${JSON.stringify(derive(swagger, names), null, 1)}\n`,
    'shapes.tsv': deriveShapes(swagger),
  };
  for (const [file, text] of Object.entries(outputs)) {
    const target = path.join(folder, file);
    if (process.argv.includes('--check')) {
      const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
      if (current !== text) {
        console.error(`devcluster/upstream/${file} is out of date: run node scripts/upstream/derive-catalog.mjs`);
        process.exitCode = 1;
      }
    } else fs.writeFileSync(target, text);
  }
}
