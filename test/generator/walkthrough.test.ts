/**
 * The generated README's walkthrough, followed as written, for a large CRD: `init` from a CRD over
 * 262,144 bytes, then the README's own kubectl commands for `crds/` and `samples/`, run by the real
 * kubectl against a devcluster. A client-side `kubectl apply -f crds/` fails on such a CRD, as on
 * any cluster: it stores the whole object in the last-applied annotation, and the API server
 * refuses annotations over 262,144 bytes in all (D-META-12, D-KCTL-5); the README's server-side
 * apply works. `npm test` builds the large CRD in code; the external-corpus suite follows the
 * walkthrough with real CRDs of that size.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import * as cli from '../../generator/cli.js';
import { startTestCluster, type TestCluster } from '../support/cluster.js';
import { requireKubectl } from '../support/kubectl.js';
import { run } from '../support/processes.js';
import * as ps from './projects-support.js';
import * as support from './support.js';

/** The API server's limit on the annotations of one object, keys and values together. */
const ANNOTATIONS_LIMIT = 262_144;

const root = ps.tempDir('kopf-gen-walkthrough-');
afterAll(() => ps.cleanup(root));

/**
 * A Widget CRD (`bigwidgets.example.com`) of `fields` documented fields, each with a description
 * of `descriptionLength` characters — large as real CRDs are large: by their descriptions.
 */
function largeCrd(fields: number, descriptionLength: number): string {
  const properties: Record<string, unknown> = {};
  for (let index = 0; index < fields; index += 1) {
    const words = `Field number ${index} of the large widget, described at length as generated API references are. `;
    properties[`field${index}`] = {
      type: index % 3 === 0 ? 'integer' : 'string',
      description: words.repeat(Math.ceil(descriptionLength / words.length)).slice(0, descriptionLength),
    };
  }
  const spec = { type: 'object', required: ['field0', 'field1'], properties };
  return yaml.stringify(support.crd(spec, { kind: 'BigWidget' }), { lineWidth: 0 });
}

/** A kubectl command of the README: its arguments after `kubectl`. */
type KubectlCommand = readonly string[];

/**
 * The kubectl commands of the README's "Quick start" block that apply `crds/` or `samples/`, in
 * order, as written: each line split at `&&` and `;`, comments dropped.
 */
function readmeCommands(readme: string): KubectlCommand[] {
  const section = readme.split(/^## /m).find((part) => part.startsWith('Quick start'));
  const block = section === undefined ? undefined : /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('the README has no Quick start block');
  const commands: KubectlCommand[] = [];
  for (const line of block.split('\n')) {
    for (const part of line.replace(/\s#.*$/, '').split(/&&|;/)) {
      const words = part.trim().split(/\s+/);
      if (words[0] !== 'kubectl' || words[1] !== 'apply') continue;
      const target = words[words.indexOf('-f') + 1];
      if (target === 'crds/' || target === 'samples/') commands.push(words.slice(1));
    }
  }
  return commands;
}

/** Follows the walkthrough for one CRD file on a fresh devcluster. */
function walkthrough(name: string, crdText: () => string): void {
  let test: TestCluster;
  let project: string;
  const kubectl = (args: readonly string[]) =>
    run('kubectl', ['--kubeconfig', test.kubeconfig, '--cache-dir', path.join(test.dir, 'kubectl-cache'), ...args], { cwd: project, timeoutMs: 60_000 });

  beforeAll(async () => {
    requireKubectl();
    test = await startTestCluster({ prefix: 'kopf-gen-walkthrough-cluster-' });
    const input = ps.write(path.join(root, 'inputs', name), crdText());
    project = path.join(root, name.replace(/\.ya?ml$/, '-operator'));
    const io = ps.capture();
    expect(await cli.main(['init', '--crd', input, '--out', project], io), io.stderr()).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await test?.stop();
    if (test) ps.cleanup(test.dir);
  });

  it(`${name}: a CRD copy in crds/ over 262,144 bytes`, () => {
    const copies = fs.readdirSync(path.join(project, 'crds'));
    const largest = Math.max(
      ...copies.flatMap((file) =>
        yaml.parseAllDocuments(fs.readFileSync(path.join(project, 'crds', file), 'utf8')).map((document) => JSON.stringify(document.toJS()).length),
      ),
    );
    expect(largest).toBeGreaterThan(ANNOTATIONS_LIMIT);
  });

  it(`D-META-12 D-KCTL-5 ${name}: a client-side kubectl apply -f crds/ is refused, the annotation too long`, async () => {
    const refused = await kubectl(['apply', '-f', 'crds/']);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain(`metadata.annotations: Too long: may not be more than ${ANNOTATIONS_LIMIT} bytes`);
  }, 120_000);

  it(`${name}: the README's commands apply crds/ (server-side) and samples/`, async () => {
    const readme = fs.readFileSync(path.join(project, 'README.md'), 'utf8');
    const commands = readmeCommands(readme);
    expect(commands.map((command) => command.join(' '))).toEqual(['apply --server-side -f crds/', 'apply -f samples/']);
    for (const command of commands) {
      const done = await kubectl(command);
      expect(done.code, `kubectl ${command.join(' ')}\n${done.output}`).toBe(0);
    }
    const samples = fs.readdirSync(path.join(project, 'samples'));
    expect(samples.length).toBeGreaterThan(0);
    for (const file of samples) {
      for (const document of yaml.parseAllDocuments(fs.readFileSync(path.join(project, 'samples', file), 'utf8'))) {
        const sample = document.toJS() as { apiVersion: string; kind: string; metadata: { name: string } };
        const [group] = sample.apiVersion.split('/');
        const got = await kubectl(['get', `${sample.kind.toLowerCase()}.${group}`, sample.metadata.name, '-o', 'name']);
        expect(got.code, got.output).toBe(0);
      }
    }
  }, 180_000);
}

describe("the README's walkthrough for a large CRD", () => {
  walkthrough('bigwidgets.yaml', () => largeCrd(300, 1000));

  it("reads the README's kubectl commands as written", () => {
    const readme =
      '## Quick start\n\n```sh\nnpm install\nkubectl apply --server-side -f crds/ && kubectl apply -f deploy/; kubectl apply -f samples/   # a comment -f crds/\n```\n';
    expect(readmeCommands(readme)).toEqual([
      ['apply', '--server-side', '-f', 'crds/'],
      ['apply', '-f', 'samples/'],
    ]);
  });
});

/** The corpus files with a CRD whose JSON form is over the annotations limit (as its last-applied copy would be). */
function largeFiles(directory: string): string[] {
  return support.yamlFiles(directory).filter((file) => {
    const text = fs.readFileSync(path.join(directory, file), 'utf8');
    return yaml
      .parseAllDocuments(text)
      .some(
        (document) =>
          (document.toJS() as { kind?: unknown } | null)?.kind === 'CustomResourceDefinition' && JSON.stringify(document.toJS()).length > ANNOTATIONS_LIMIT,
      );
  });
}

/** The corpus file the walkthrough prefers (one CRD of 833 KB); another corpus gets its first large file. */
const PREFERRED = 'prometheus-operator-prometheuses.yaml';

support.describeCorpus((directory) => {
  const large = largeFiles(directory);
  const file = large.includes(PREFERRED) ? PREFERRED : large[0];
  if (file === undefined) it('holds a CRD over 262,144 bytes', () => expect(large).not.toEqual([]));
  else walkthrough(file, () => fs.readFileSync(path.join(directory, file), 'utf8'));
});
