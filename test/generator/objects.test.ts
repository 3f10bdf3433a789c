/**
 * Objects as users write them, against the repository's fixture CRDs (fixtures/crds/*.yaml and
 * fixtures/crds/generator/*.yaml). Each file of fixtures/objects/inputs/ holds one realistic object
 * covering something users do: leaving defaulted fields to the server (at the top, in nested
 * partial objects, in list items and map values), setting nullable fields to null, leaving YAML
 * values empty, embedding resources, using awkward property names. For each object:
 *
 * - the devcluster accepts it as written (dry run, strict field validation, as `kubectl apply`);
 * - the generated input type (`names.input` of the object's version) accepts it as written;
 * - the generated body type (`names.body`: the object as the server returns it, defaults applied)
 *   rejects it exactly when it leaves defaulted fields to the server. A file says so with a
 *   `# body: rejects (…)` line, and the server confirms it: its answer differs from the object
 *   written (outside metadata) exactly for those files.
 */
import { isDeepStrictEqual } from 'node:util';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import { startTestCluster, type TestCluster } from '../support/cluster.js';
import * as support from './support.js';

const OBJECTS = path.join(support.REPO_ROOT, 'fixtures/objects/inputs');
const CRD_FILES = [
  ...support.yamlFiles(path.join(support.REPO_ROOT, 'fixtures/crds')).map((name) => path.join(support.REPO_ROOT, 'fixtures/crds', name)),
  ...support.fixtureFiles().map((name) => path.join(support.FIXTURES, name)),
];
/** Served versions no object is written for: their CRD converts through a webhook, which the devcluster does not call. */
const WEBHOOK_CONVERTED = new Set(['deploy.example.net/v1 Release', 'deploy.example.net/v2beta1 Release']);
/**
 * The group of the fixture kinds named like runtime types, global types and TypeScript words
 * (shadows*.yaml): they exist to prove that such names compile, with a one-field schema; the
 * emitting tests create objects of them through the typed client.
 */
const NAME_ONLY_GROUP = 'shadows.example.com';

/**
 * The CRD documents of the fixture files, as the devcluster loads them. The devcluster supports no
 * conversion webhook, so a CRD converting through one is loaded with the `None` strategy: objects
 * of its storage version, the only ones written for it, are validated and defaulted the same.
 */
function devclusterCrds(): Record<string, unknown>[] {
  return CRD_FILES.flatMap((file) => yaml.parseAllDocuments(fs.readFileSync(file, 'utf8')).map((document) => document.toJS() as unknown))
    .filter((document): document is Record<string, unknown> => (document as { kind?: unknown } | null)?.kind === 'CustomResourceDefinition')
    .map((crd) => {
      const spec = crd['spec'] as Record<string, unknown>;
      return (spec['conversion'] as { strategy?: unknown } | undefined)?.strategy === 'Webhook'
        ? { ...crd, spec: { ...spec, conversion: { strategy: 'None' } } }
        : crd;
    });
}

type JsonObject = Record<string, unknown>;

interface Written {
  readonly file: string;
  readonly object: JsonObject;
  /** The file's `# body: rejects` line: the object leaves defaulted fields to the server. */
  readonly bodyRejects: boolean;
  /**
   * The file's `# input: rejects` line: the object writes `null` where the schema does not allow it.
   * The server drops such a null (or puts the default in its place), so it means what leaving the
   * field out means; the input type refuses it, as it refuses unknown fields the server also drops.
   */
  readonly inputRejects: boolean;
}

const written: Written[] = support.yamlFiles(OBJECTS).map((file) => {
  const text = fs.readFileSync(path.join(OBJECTS, file), 'utf8');
  return { file, object: yaml.parse(text) as JsonObject, bodyRejects: /^# body: rejects\b/m.test(text), inputRejects: /^# input: rejects\b/m.test(text) };
});

const { model, modules } = support.generate(CRD_FILES.map((file) => ({ path: `crds/${path.basename(file)}`, text: fs.readFileSync(file, 'utf8') })));
const versions = model.crds.flatMap((crd) => crd.versions);
const key = (apiVersion: unknown, kind: unknown): string => `${String(apiVersion)} ${String(kind)}`;
const versionOf = (object: JsonObject) => {
  const version = versions.find((candidate) => key(`${candidate.group}/${candidate.version}`, candidate.kind) === key(object['apiVersion'], object['kind']));
  if (!version) throw new Error(`no fixture CRD serves ${key(object['apiVersion'], object['kind'])}`);
  return version;
};
const moduleOf = (object: JsonObject) => {
  const version = versionOf(object);
  return modules.find((module) => module.group === version.group && module.version === version.version && module.kind === version.kind)!;
};

/** The check file of an object against one of its module's types: `export const object: <Type> = <the object>;`. */
function check(entry: Written, which: 'input' | 'body'): support.CheckFile {
  const module = moduleOf(entry.object);
  const name = module.names[which];
  const specifier = `./${module.fileName.replace(/\.ts$/, '.js')}`;
  return {
    fileName: `${which}-${entry.file.replace(/\.yaml$/, '')}.ts`,
    text: `import type { ${name} } from '${specifier}';\n\nexport const object: ${name} = ${JSON.stringify(entry.object, null, 2)};\n`,
  };
}

let test: TestCluster;
/** The server's answer to each object's dry-run creation, by file. */
const answers = new Map<string, { status: number; body: JsonObject }>();
/** The type-check diagnostics of each check file, by the check file's name. */
const diagnostics = new Map<string, string[]>();

beforeAll(async () => {
  test = await startTestCluster({ crds: devclusterCrds(), tls: false });
  for (const entry of written) {
    const version = versionOf(entry.object);
    const metadata = (entry.object['metadata'] ?? {}) as JsonObject;
    const scope = version.namespaced ? `namespaces/${String(metadata['namespace'] ?? 'default')}/` : '';
    const response = await fetch(`${test.cluster.url}/apis/${version.group}/${version.version}/${scope}${version.plural}?dryRun=All&fieldValidation=Strict`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(entry.object),
    });
    answers.set(entry.file, { status: response.status, body: (await response.json()) as JsonObject });
  }
  const checks = written.flatMap((entry) => [check(entry, 'input'), check(entry, 'body')]);
  const found = support.typecheck([...modules, ...checks]);
  for (const { fileName } of checks)
    diagnostics.set(
      fileName,
      found.filter((line) => line.startsWith(`${fileName}:`)),
    );
  const elsewhere = found.filter((line) => !checks.some(({ fileName }) => line.startsWith(`${fileName}:`)));
  if (elsewhere.length) throw new Error(`the generated modules do not type-check:\n${elsewhere.join('\n')}`);
}, 180_000);

afterAll(async () => {
  await test?.stop();
});

/** Everything but metadata: what defaulting may change. */
const content = (object: JsonObject): JsonObject => Object.fromEntries(Object.entries(object).filter(([name]) => name !== 'metadata'));

describe('objects as users write them (fixtures/objects/inputs)', () => {
  it('cover every served version of every fixture CRD', () => {
    const covered = new Set(written.map((entry) => key(entry.object['apiVersion'], entry.object['kind'])));
    const uncovered = versions
      .map((version) => key(`${version.group}/${version.version}`, version.kind))
      .filter((served) => !covered.has(served) && !WEBHOOK_CONVERTED.has(served) && !served.startsWith(`${NAME_ONLY_GROUP}/`));
    expect(uncovered).toEqual([]);
  });

  it('cover objects the body type must reject and objects it must accept', () => {
    expect(written.filter((entry) => entry.bodyRejects).length).toBeGreaterThanOrEqual(5);
    expect(written.filter((entry) => !entry.bodyRejects).length).toBeGreaterThanOrEqual(5);
  });

  it.each(written.map((entry) => [entry.file, entry] as const))(
    'D-CRD-9 D-CRD-11 %s: the devcluster accepts it as written (dry run, strict field validation)',
    (_, entry) => {
      const answer = answers.get(entry.file)!;
      expect({ status: answer.status, message: answer.body['message'] }).toEqual({ status: 201, message: undefined });
    },
  );

  it.each(written.map((entry) => [entry.file, entry] as const))(
    'D-CRD-8 D-CRD-10 %s: the server fills in fields exactly when the file says it leaves defaults to the server',
    (_, entry) => {
      const answer = answers.get(entry.file)!;
      expect(!isDeepStrictEqual(content(answer.body), content(entry.object))).toBe(entry.bodyRejects);
    },
  );

  it.each(written.map((entry) => [entry.file, entry] as const))(
    '%s: the generated input type accepts it as written, or refuses only nulls the schema does not allow',
    (_, entry) => {
      const found = diagnostics.get(check(entry, 'input').fileName)!;
      if (!entry.inputRejects) expect(found).toEqual([]);
      else {
        expect(found).not.toEqual([]);
        for (const line of found) expect(line).toMatch(/Type 'null' is not assignable to type/);
      }
    },
  );

  it.each(written.map((entry) => [entry.file, entry] as const))(
    '%s: the generated body type rejects it exactly when it leaves defaulted fields to the server',
    (_, entry) => {
      const found = diagnostics.get(check(entry, 'body').fileName)!;
      if (entry.bodyRejects) expect(found).not.toEqual([]);
      else expect(found).toEqual([]);
    },
  );
});
