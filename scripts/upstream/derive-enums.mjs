#!/usr/bin/env node
// Derives the enumerations of the built-in kinds (devcluster/upstream/enums.json) from the Go types
// of the kubernetes/api repository (tag v0.32.13 = Kubernetes 1.32): the string types marked
// `// +enum`, their typed string constants, and the struct fields declared with those types (by
// their json names), mapped to the OpenAPI definitions of devcluster/upstream/swagger.json. The
// published OpenAPI v2 document carries no enum values, so this is where the devcluster's schema
// rules (D-BI-21) learn them.
//
// Values are listed in the order upstream's `Unsupported value` message lists them: sorted (the
// validation of most fields passes a sorted set), or in declaration order for the fields whose
// validation passes its own list (DECLARED_ORDER, each checked against upstream's validation code).
// Fields whose +enum type accepts more than its constants are left unchecked and listed under
// `exceptions` with the reason (EXCEPTIONS).
//
//   node scripts/upstream/derive-enums.mjs <kubernetes-api checkout or git dir> [--ref v0.32.13] [--check]
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readRepository as readFiles, TAG } from './derive-field-order.mjs';
import * as command from './command.mjs';

const folder = path.resolve(import.meta.dirname, '..', '..', 'devcluster', 'upstream');

/** Fields whose upstream message lists the values as the validation code declares them, not sorted. */
const DECLARED_ORDER = new Set([
  'io.k8s.api.batch.v1.JobSpec.completionMode', // []string{NonIndexed, Indexed}
  'io.k8s.api.core.v1.PodSpec.restartPolicy', // validateRestartPolicy: Always, OnFailure, Never
  'io.k8s.api.core.v1.PodSpec.dnsPolicy', // validateDNSPolicy: ClusterFirstWithHostNet, ClusterFirst, Default, None
  'io.k8s.api.batch.v1.CronJobSpec.concurrencyPolicy', // validateConcurrencyPolicy: Allow, Forbid, Replace
  'io.k8s.api.apps.v1.DeploymentStrategy.type', // ValidateDeploymentStrategy: Recreate, RollingUpdate
]);

/**
 * Fields whose message lists the type's empty constant (`""`, the unset value) among the supported
 * ones; for the others it is only the unset value, never listed.
 */
const EMPTY_LISTED = new Set([
  'io.k8s.api.core.v1.HostPathVolumeSource.type', // supportedHostPathTypes includes HostPathUnset
]);

/** Fields of +enum types that upstream accepts beyond the type's constants, with the reason. */
const EXCEPTIONS = {
  'io.k8s.api.core.v1.PodSecurityContext.supplementalGroupsPolicy':
    'the SupplementalGroupsPolicy feature gate is alpha and off by default in 1.32: the field is dropped on create, not validated',
};

/** Go files of a package that declare types and constants (not generated code, not tests). */
const isSource = (file) => file.endsWith('.go') && !file.endsWith('_test.go') && !/(^|\/)(zz_generated|generated\.pb|types_swagger_doc_generated)/.test(file);

/** The parts of one Go package the derivation needs. */
function parsePackage(files) {
  const enums = new Map(); // type name → true (or the aliased type name)
  const constants = []; // { name, type, value | ref } in declaration order
  const structs = new Map(); // struct name → [{ json, type: {pkg alias, name}, inline }]
  const imports = new Map(); // alias → package path inside kubernetes/api (core/v1)
  for (const text of files) {
    for (const m of text.matchAll(/^\s*(?:(\w+)\s+)?"k8s\.io\/api\/([\w/]+)"/gm)) imports.set(m[1] ?? path.basename(m[2]), m[2]);
    const lines = text.split('\n');
    let comment = [];
    let inConst = false;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const trimmed = line.trim();
      if (trimmed.startsWith('//')) {
        comment.push(trimmed);
        continue;
      }
      const marked = comment.some((c) => /^\/\/\s*\+enum\s*$/.test(c));
      comment = [];
      let m = /^type (\w+) string\b/.exec(line);
      if (m && marked) enums.set(m[1], true);
      m = /^type (\w+) = (\w+)\s*$/.exec(line);
      if (m) enums.set(m[1], enums.get(m[1]) ?? `alias:${m[2]}`);
      if (/^const \($/.test(line)) inConst = true;
      else if (inConst && trimmed === ')') inConst = false;
      // `Name Type = "v"`, `Name = Type("v")`, `Name = Type(pkg.Other)`, `Name Type = Other`.
      m = new RegExp(
        `^${inConst ? '\\s*' : 'const '}(\\w+)(?:\\s+(\\w+))?\\s*=\\s*(?:(\\w+)\\()?(?:"((?:[^"\\\\]|\\\\.)*)"|((?:\\w+\\.)?\\w+))\\)?\\s*(?:\\/\\/.*)?$`,
      ).exec(line);
      if (m && (inConst || line.startsWith('const '))) constants.push({ name: m[1], type: m[2] ?? m[3], value: m[4], ref: m[5] });
      m = /^type (\w+) struct \{\s*$/.exec(line);
      if (m) {
        const fields = [];
        for (i++; i < lines.length && lines[i] !== '}'; i++) {
          const f = /^\s*(?:(\w+)\s+)?(\*|\[\])*(?:(\w+)\.)?(\w+)\s+`[^`]*json:"([^",]*)[^"]*"/.exec(lines[i]);
          if (f) fields.push({ json: f[5], pkg: f[3], type: f[4], inline: !f[1] || f[5] === '' });
        }
        structs.set(m[1], fields);
      }
    }
  }
  // Aliases of enum types (`type A = B`) are the same type.
  for (const [name, v] of enums) {
    if (v === true) continue;
    const target = v.slice('alias:'.length);
    if (enums.get(target) === true) enums.set(name, { alias: target });
    else enums.delete(name);
  }
  return { enums, constants, structs, imports };
}

/** The string constants of every enum type (`dir.Type` → values in declaration order), references resolved. */
function enumValues(packages) {
  const resolveRef = (dir, ref, depth = 0) => {
    const [alias, name] = ref.includes('.') ? ref.split('.') : [undefined, ref];
    const pkgDir = alias ? packages.get(dir)?.imports.get(alias) : dir;
    const c = pkgDir && packages.get(pkgDir)?.constants.find((x) => x.name === name);
    if (!c || depth > 4) return undefined;
    return c.value ?? resolveRef(pkgDir, c.ref, depth + 1);
  };
  const out = new Map();
  for (const [dir, pkg] of packages) {
    for (const [name, v] of pkg.enums) {
      const type = v === true ? name : v.alias;
      const values = [];
      for (const c of pkg.constants) {
        if (c.type !== type && c.type !== name) continue;
        const value = c.value ?? resolveRef(dir, c.ref);
        if (value !== undefined && !values.includes(value)) values.push(value);
      }
      out.set(`${dir}.${name}`, values);
    }
  }
  return out;
}

/** Whether the OpenAPI document has definitions of a package (`core/v1`): versions not served have none. */
const packageServed = (swagger, dir) => {
  const prefix = `io.k8s.api.${dir.split('/').join('.')}.`;
  return Object.keys(swagger.definitions).some((d) => d.startsWith(prefix));
};

/** Sorts like Go's sort.Strings (byte order; the values are ASCII). */
const sorted = (values) => [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

export function derive(swagger, sourceFiles, source) {
  const packages = new Map();
  const byPackage = new Map();
  for (const [file, text] of Object.entries(sourceFiles)) {
    if (!isSource(file)) continue;
    const dir = path.dirname(file);
    if (!byPackage.has(dir)) byPackage.set(dir, []);
    byPackage.get(dir).push(text);
  }
  for (const [dir, files] of byPackage) packages.set(dir, parsePackage(files));
  const values = enumValues(packages);

  const enumOf = (pkgDir, field) => {
    const own = packages.get(pkgDir);
    const targetDir = field.pkg ? own.imports.get(field.pkg) : pkgDir;
    const target = targetDir && packages.get(targetDir);
    if (!target?.enums.has(field.type)) return undefined;
    return { key: `${targetDir}.${field.type}`, values: values.get(`${targetDir}.${field.type}`) ?? [] };
  };
  /** The enum fields of a struct, inline members' included. */
  const enumFields = (pkgDir, structName, seen = new Set()) => {
    const key = `${pkgDir}.${structName}`;
    if (seen.has(key)) return [];
    seen.add(key);
    const pkg = packages.get(pkgDir);
    const out = [];
    for (const field of pkg?.structs.get(structName) ?? []) {
      if (field.inline) {
        const dir = field.pkg ? pkg.imports.get(field.pkg) : pkgDir;
        if (dir) out.push(...enumFields(dir, field.type, seen));
        continue;
      }
      const e = enumOf(pkgDir, field);
      if (e) out.push({ json: field.json, ...e });
    }
    return out;
  };

  const definitions = {};
  const exceptions = {};
  const unmapped = [];
  const enumTypes = new Set();
  let fields = 0;
  for (const [dir, pkg] of [...packages].sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const [name, v] of pkg.enums) if (v === true && packageServed(swagger, dir)) enumTypes.add(`${dir}.${name}`);
    for (const structName of [...pkg.structs.keys()].sort()) {
      const found = enumFields(dir, structName);
      if (!found.length) continue;
      const definition = `io.k8s.api.${dir.split('/').join('.')}.${structName}`;
      const schema = swagger.definitions[definition];
      if (!schema) {
        unmapped.push(`${dir}.${structName} (no definition)`);
        continue;
      }
      for (const f of found) {
        if (!schema.properties?.[f.json]) {
          unmapped.push(`${definition}.${f.json} (no property)`);
          continue;
        }
        const id = `${definition}.${f.json}`;
        if (EXCEPTIONS[id]) {
          (exceptions[definition] ??= {})[f.json] = { values: f.values, reason: EXCEPTIONS[id] };
          continue;
        }
        const listed = EMPTY_LISTED.has(id) ? f.values : f.values.filter((v) => v !== '');
        (definitions[definition] ??= {})[f.json] = DECLARED_ORDER.has(id) ? listed : sorted(listed);
        fields++;
      }
    }
  }
  const missing = [...DECLARED_ORDER, ...Object.keys(EXCEPTIONS)].filter((id) => {
    const at = id.lastIndexOf('.');
    const def = id.slice(0, at);
    const prop = id.slice(at + 1);
    return !definitions[def]?.[prop] && !exceptions[def]?.[prop];
  });
  return {
    data: {
      about:
        "Values of the built-in kinds' enum fields (Go types marked +enum, their string constants, the fields declared with them), derived by scripts/upstream/derive-enums.mjs; do not edit by hand. Values are in the order upstream's Unsupported value message lists them. Exceptions are not checked.",
      source,
      kubernetes: '1.32',
      definitions,
      exceptions,
    },
    report: { enumTypes: enumTypes.size, fields, definitions: Object.keys(definitions).length, unmapped, missing },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { args, ref, repo } = command.repositoryArguments('derive-enums.mjs', TAG);
  const swagger = JSON.parse(fs.readFileSync(path.join(folder, 'swagger.json'), 'utf8'));
  const { goFiles } = readFiles(repo, ref);
  const { data, report } = derive(swagger, goFiles, `kubernetes/api ${ref} (+enum types)`);
  console.error(`${report.enumTypes} enum types, ${report.fields} enum fields in ${report.definitions} definitions`);
  for (const u of report.unmapped) console.error(`  not in the OpenAPI document: ${u}`);
  for (const m of report.missing) console.error(`  problem: ${m} is listed but no such enum field was found`);
  if (report.missing.length) process.exit(1);
  const text = `${JSON.stringify(data, null, 1)}\n`;
  const target = path.join(folder, 'enums.json');
  command.writeOrCheck(args, target, text, 'derive-enums.mjs');
}
