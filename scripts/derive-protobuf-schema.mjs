#!/usr/bin/env node
// Derives the devcluster's protobuf data, devcluster/upstream/proto/kubernetes.json, from the
// Kubernetes API's published schemas, so that the server can read kubectl's protobuf request
// bodies without carrying the .proto sources (and their comments) in the npm package.
//
//   node scripts/derive-protobuf-schema.mjs <kubernetes/api checkout> <kubernetes/apimachinery checkout>
//
// Both checkouts must be at the tag named in TAG. The output has three parts:
//   - `schema`: the messages of the `generated.proto` files listed below, as protobufjs's JSON
//     descriptor (what `Root.fromJSON` reads);
//   - `groups`: which proto package holds the kinds of each served apiVersion (`apps/v1` →
//     `k8s.io.api.apps.v1`), read from each package's `GroupName`;
//   - `go`: the facts of the Go structs behind the messages that the JSON form depends on and the
//     .proto files do not say: a scalar field that is a Go pointer (an explicit zero is kept), one
//     whose JSON tag lacks `omitempty` (a zero is written), a JSON name that differs from the proto
//     field name, an embedded struct whose fields are inlined into the parent (`json:",inline"`),
//     and named slices (`type ExtraValue []string`), which protobuf wraps in a message with one
//     `items` field while JSON writes the bare list. A field is recorded by its Go JSON tag, with a
//     leading `*` for pointers; fields with the default tag (`<name>,omitempty`, not a pointer) are
//     left out. The facts are read from the Go sources' struct tags, matched to proto fields by
//     field number.
import * as fs from 'node:fs';
import * as path from 'node:path';
import protobuf from 'protobufjs';

const TAG = 'v0.32.13';
const OUTPUT = path.resolve(import.meta.dirname, '../devcluster/upstream/proto/kubernetes.json');

/** The apimachinery packages the API's schemas import. */
const APIMACHINERY = ['pkg/apis/meta/v1', 'pkg/runtime', 'pkg/runtime/schema', 'pkg/api/resource', 'pkg/util/intstr'];

/** The stable group versions a 1.32 API server serves (apiextensions lives in another repository). */
const API = [
  'core/v1',
  'apps/v1',
  'batch/v1',
  'autoscaling/v1',
  'autoscaling/v2',
  'policy/v1',
  'networking/v1',
  'rbac/v1',
  'storage/v1',
  'coordination/v1',
  'discovery/v1',
  'events/v1',
  'scheduling/v1',
  'node/v1',
  'certificates/v1',
  'flowcontrol/v1',
  'admissionregistration/v1',
  'authentication/v1',
  'authorization/v1',
];

const [apiDir, machineryDir] = process.argv.slice(2);
if (!apiDir || !machineryDir) {
  console.error('usage: derive-protobuf-schema.mjs <kubernetes/api checkout> <kubernetes/apimachinery checkout>');
  process.exit(2);
}

/** Where an import such as `k8s.io/api/core/v1/generated.proto` lives in the two checkouts. */
function resolveImport(target) {
  if (target.startsWith('k8s.io/api/')) return path.join(apiDir, target.slice('k8s.io/api/'.length));
  if (target.startsWith('k8s.io/apimachinery/')) return path.join(machineryDir, target.slice('k8s.io/apimachinery/'.length));
  return target;
}

const packages = [
  ...APIMACHINERY.map((dir) => ({ dir: path.join(machineryDir, dir), proto: `k8s.io/apimachinery/${dir}/generated.proto` })),
  ...API.map((dir) => ({ dir: path.join(apiDir, dir), proto: `k8s.io/api/${dir}/generated.proto`, api: dir })),
];

const root = new protobuf.Root();
root.resolvePath = (_origin, target) => resolveImport(target);
root.loadSync(
  packages.map((p) => p.proto),
  { keepCase: true },
);
root.resolveAll();
prune();

/**
 * Keeps only the messages a request body can hold: the kinds (messages of the API packages whose
 * field 1 is `metadata` of type ObjectMeta, which leaves lists out), `DeleteOptions`, the envelope
 * `runtime.Unknown`, and everything they contain.
 */
function prune() {
  const kept = new Set();
  const keep = (type) => {
    if (kept.has(type)) return;
    kept.add(type);
    for (const field of type.fieldsArray) if (field.resolvedType instanceof protobuf.Type) keep(field.resolvedType);
  };
  const types = [];
  const collect = (ns) => {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf.Type) types.push(child);
      else if (child instanceof protobuf.Namespace) collect(child);
    }
  };
  collect(root);
  for (const type of types) {
    const metadata = type.fields.metadata;
    if (type.fullName.startsWith('.k8s.io.api.') && metadata?.id === 1 && metadata.type.endsWith('.ObjectMeta')) keep(type);
  }
  keep(root.lookupType('k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions'));
  keep(root.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown'));
  for (const type of types) if (!kept.has(type)) type.parent.remove(type);
}

// --- Go struct tags ------------------------------------------------------------------------------

/** Go struct fields of one package: `{ StructName: { protoId: { pointer, tag } } }`, and named slices. */
function readGoPackage(dir) {
  const structs = new Map();
  const slices = new Set();
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.go') && !f.endsWith('_test.go') && !f.startsWith('zz_generated') && f !== 'generated.pb.go' && !f.includes('swagger_doc'));
  for (const file of files) {
    const lines = fs.readFileSync(path.join(dir, file), 'utf8').split('\n');
    let current;
    for (const line of lines) {
      const slice = /^type (\w+) \[\]\S+\s*$/.exec(line);
      if (slice) slices.add(slice[1]);
      const open = /^type (\w+) struct \{\s*$/.exec(line);
      if (open) {
        current = new Map();
        structs.set(open[1], current);
        continue;
      }
      if (current && /^\}/.test(line)) {
        current = undefined;
        continue;
      }
      if (!current) continue;
      // `Name Type `tags`` or an embedded `Type `tags``.
      const field = /^\s*(?:(\w+)\s+)?([^\s`]+)\s+`([^`]*)`/.exec(line);
      if (!field) continue;
      const tags = field[3];
      const pb = /protobuf:"[a-z0-9]+,(\d+),/.exec(tags);
      if (!pb) continue;
      const json = /json:"([^"]*)"/.exec(tags);
      current.set(Number(pb[1]), { pointer: field[2].startsWith('*'), tag: json ? json[1] : '', goName: field[1] ?? field[2] });
    }
  }
  return { structs, slices };
}

/**
 * Messages whose Go types marshal themselves (the devcluster converts them by name) or that no
 * object contains: they need no struct facts.
 */
const CUSTOM = new Set([
  'k8s.io.apimachinery.pkg.apis.meta.v1.Time',
  'k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime',
  'k8s.io.apimachinery.pkg.apis.meta.v1.Patch',
  'k8s.io.apimachinery.pkg.api.resource.Quantity',
  'k8s.io.apimachinery.pkg.api.resource.QuantityValue',
  'k8s.io.api.core.v1.List',
]);

const SCALARS = new Set([
  'double',
  'float',
  'int32',
  'int64',
  'uint32',
  'uint64',
  'sint32',
  'sint64',
  'fixed32',
  'fixed64',
  'sfixed32',
  'sfixed64',
  'bool',
  'string',
  'bytes',
]);

const go = {};
const slices = [];
const groups = {};
const problems = [];

for (const pkg of packages) {
  const file = root.files.find((f) => f.endsWith(pkg.proto.slice('k8s.io/'.length))) ?? pkg.proto;
  const namespace = namespaceOf(pkg.proto);
  const { structs, slices: goSlices } = readGoPackage(pkg.dir);
  if (pkg.api) {
    const register = fs.readFileSync(path.join(pkg.dir, 'register.go'), 'utf8');
    const group = /GroupName\s*=\s*"([^"]*)"/.exec(register)?.[1];
    if (group === undefined) problems.push(`${pkg.api}: no GroupName in register.go`);
    const version = pkg.api.split('/')[1];
    groups[group ? `${group}/${version}` : version] = namespace.fullName.slice(1);
  }
  for (const type of namespace.nestedArray) {
    if (!(type instanceof protobuf.Type)) continue;
    const full = type.fullName.slice(1);
    if (CUSTOM.has(full)) continue;
    if (goSlices.has(type.name)) {
      slices.push(full);
      continue;
    }
    const struct = structs.get(type.name);
    if (!struct) {
      problems.push(`${full}: no Go struct ${type.name} in ${file}`);
      continue;
    }
    const facts = {};
    for (const field of type.fieldsArray) {
      const goField = struct.get(field.id);
      if (!goField) {
        problems.push(`${full}.${field.name}: no Go field with protobuf id ${field.id}`);
        continue;
      }
      const [jsonName, ...options] = goField.tag.split(',');
      const inline = options.includes('inline');
      const omitempty = options.includes('omitempty');
      const scalar = SCALARS.has(field.type) && !field.repeated && !field.map;
      const renamed = !inline && jsonName !== field.name;
      const recorded = renamed || inline || (scalar && (goField.pointer || !omitempty));
      if (recorded) facts[field.name] = `${scalar && goField.pointer ? '*' : ''}${goField.tag}`;
    }
    if (Object.keys(facts).length) go[full] = facts;
  }
}

function namespaceOf(protoPath) {
  const dir = path.dirname(protoPath);
  return root.lookup(dir.replaceAll('/', '.'));
}

if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}

const data = {
  source: `kubernetes/api and kubernetes/apimachinery ${TAG}, generated.proto and Go struct tags (Apache-2.0)`,
  groups,
  slices: slices.sort(),
  go,
  schema: root.toJSON({ keepComments: false }),
};
fs.mkdirSync(path.dirname(OUTPUT), { recursive: true });
fs.writeFileSync(OUTPUT, `${JSON.stringify(data)}\n`);
console.log(`wrote ${path.relative(process.cwd(), OUTPUT)} (${fs.statSync(OUTPUT).size} bytes)`);
