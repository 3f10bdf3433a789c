/**
 * kubectl against the devcluster's OpenAPI documents (D-KCTL-1, D-KCTL-4, D-KCTL-12, D-KCTL-13):
 * `kubectl explain` of built-in kinds and of a CRD, client-side validation where kubectl does it
 * (1.20 against `/openapi/v2`) and its absence where kubectl leaves it to the server (1.27+, which
 * finds `fieldValidation` in `/openapi/v3`), and the patch types `apply` picks (1.20 from its
 * compiled-in types, current kubectl from the documents' PATCH media types). Both the legacy and the
 * newest kubectl build run every test.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevCluster } from '../../../devcluster/testing.js';
import type { RequestRecord } from '../../../devcluster/testing.js';
import * as kubectl from './kubectl.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const WIDGETS_CRD = path.join(ROOT, 'fixtures/crds/widgets.yaml');
const BINARIES = kubectl.findKubectls();

const DEPLOYMENT = (extraSpec: string, name = 'web'): string => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: 1${extraSpec}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c, image: nginx}]}
`;
const WIDGET = (spec: string, name = 'w-openapi'): string => `apiVersion: example.com/v1
kind: Widget
metadata: {name: ${name}}
spec: {${spec}}
`;

describe.each(BINARIES.map((b) => [b.label, b] as const))('%s and the OpenAPI documents', (label, binary) => {
  const minor = Number(binary.version?.split('.')[1] ?? 0);
  const legacy = minor < 27;
  let cluster: DevCluster;
  let target: kubectl.KubectlTarget;
  let bin: string;
  let mark = 0;

  const run = async (args: string[], input?: string): Promise<kubectl.KubectlResult> => {
    mark = cluster.requests.all.length;
    return kubectl.run(bin, target, args, { timeoutMs: 30_000, input });
  };
  const ok = async (args: string[], input?: string): Promise<kubectl.KubectlResult> =>
    kubectl.expectSuccess(await run(args, input), `kubectl ${args.join(' ')}`);
  const recorded = (): readonly RequestRecord[] => cluster.requests.all.slice(mark);
  const writes = (): RequestRecord[] => recorded().filter((r) => ['POST', 'PUT', 'PATCH'].includes(r.method));

  beforeAll(async () => {
    bin = kubectl.requireBinary(binary);
    cluster = await DevCluster.start();
    await cluster.load(WIDGETS_CRD);
    const work = kubectl.makeWorkDir('kubectl-openapi-');
    target = { kubeconfig: cluster.writeKubeconfig(path.join(work, 'kubeconfig')), workDir: work };
  });
  afterAll(async () => {
    await cluster?.stop();
    if (target) fs.rmSync(target.workDir, { recursive: true, force: true });
  });

  it(`C-133 D-KCTL-12 ${label}: explain shows a built-in field's type and description`, async () => {
    if (legacy) {
      const r = await ok(['explain', 'deployment.spec.replicas']);
      expect(r.stdout).toMatch(/KIND:\s+Deployment\nVERSION:\s+apps\/v1\n\nFIELD:\s+replicas <integer>/);
      expect(r.stdout).toContain('Number of desired pods.');
      expect(recorded().some((x) => x.path === '/openapi/v2')).toBe(true);
    } else {
      const r = await ok(['explain', 'job.spec.completions']);
      expect(r.stdout).toMatch(/GROUP:\s+batch\nKIND:\s+Job\nVERSION:\s+v1\n\nFIELD: completions <integer>/);
      expect(r.stdout).toContain('Specifies the desired number of successfully finished pods');
      expect(recorded().find((x) => x.path === '/openapi/v3/apis/batch/v1')?.code).toBe(200);
      const recursive = await ok(['explain', 'cronjob', '--recursive']);
      const head = recursive.stdout.split('\n').slice(0, 12).join('\n');
      expect(head).toMatch(/KIND:\s+CronJob/);
      expect(head).toMatch(/FIELDS:\n\s+apiVersion\t<string>\n\s+kind\t<string>\n\s+metadata\t<ObjectMeta>\n\s+annotations\t<map\[string\]string>/);
    }
  });

  it(`C-133 D-KCTL-12 ${label}: explain shows a custom resource's fields from its CRD schema`, async () => {
    if (legacy) {
      const r = await ok(['explain', 'widget.spec']);
      expect(r.stdout).toMatch(/KIND:\s+Widget\nVERSION:\s+example\.com\/v1\n\nRESOURCE: spec <Object>/);
      expect(r.stdout).toMatch(/size\t<integer> -required-/);
      expect(r.stdout).toMatch(/tags\t<\[\]string>/);
    } else {
      const r = await ok(['explain', 'widget.spec.size']);
      expect(r.stdout).toMatch(/GROUP:\s+example\.com\nKIND:\s+Widget\nVERSION:\s+v1\n\nFIELD: size <integer>/);
      const spec = await ok(['explain', 'widget.spec']);
      expect(spec.stdout).toMatch(/mode\t<string>\n\s+enum: a, b/);
    }
  });

  it(`C-134 D-KCTL-13 ${label}: an unknown field in a built-in manifest fails where kubectl validates`, async () => {
    const r = await run(['create', '-f', '-'], DEPLOYMENT('\n  bogus: 1'));
    expect(r.code).toBe(1);
    if (legacy) {
      // Client-side, against /openapi/v2: nothing is sent.
      expect(r.stderr).toContain(
        'error validating data: ValidationError(Deployment.spec): unknown field "bogus" in io.k8s.api.apps.v1.DeploymentSpec; if you choose to ignore these errors, turn validation off with --validate=false',
      );
      expect(writes()).toEqual([]);
    } else {
      // Server-side: kubectl found fieldValidation in /openapi/v3 and sent the object with Strict.
      const [post] = writes();
      expect(post?.query).toContain('fieldValidation=Strict');
      expect(post?.code).toBe(400);
      expect(r.stderr).toContain('unknown field "spec.bogus"');
    }
  });

  it(`C-134 D-KCTL-13 ${label}: an unknown field in a custom resource fails where kubectl validates`, async () => {
    const r = await run(['apply', '-f', '-'], WIDGET('size: 2, bogus: 1'));
    expect(r.code).toBe(1);
    if (legacy) {
      expect(r.stderr).toContain('error validating data: ValidationError(Widget.spec): unknown field "bogus" in com.example.v1.Widget.spec');
      expect(writes()).toEqual([]);
    } else {
      expect(writes()[0]?.query).toContain('fieldValidation=Strict');
      expect(r.stderr).toContain('unknown field "spec.bogus"');
    }
  });

  it(`C-134 D-KCTL-4 ${label}: apply of a changed custom resource sends a merge patch, of a changed built-in a strategic merge patch`, async () => {
    await ok(['apply', '-f', '-'], WIDGET('size: 2, tags: [a]'));
    await ok(['apply', '-f', '-'], WIDGET('size: 3'));
    const [widgetPatch] = writes();
    expect(widgetPatch?.method).toBe('PATCH');
    expect(widgetPatch?.headers.contentType).toBe('application/merge-patch+json');
    expect(widgetPatch?.code).toBe(200);
    await ok(['apply', '-f', '-'], DEPLOYMENT(''));
    await ok(['apply', '-f', '-'], DEPLOYMENT('').replace('replicas: 1', 'replicas: 2'));
    const [deploymentPatch] = writes();
    expect(deploymentPatch?.method).toBe('PATCH');
    expect(deploymentPatch?.headers.contentType).toBe('application/strategic-merge-patch+json');
    expect(deploymentPatch?.code).toBe(200);
    expect(cluster.store.get({ apiVersion: 'apps/v1', kind: 'Deployment' }, 'web')?.['spec']).toMatchObject({ replicas: 2 });
  });

  it(`C-134 D-KCTL-4 ${label}: apply of a changed CRD sends what the kubectl version picks: merge patch from 1.20, strategic merge patch from current kubectl`, async () => {
    const crd = fs.readFileSync(WIDGETS_CRD, 'utf8');
    await ok(['apply', '-f', '-'], crd);
    await ok(['apply', '-f', '-'], crd.replace('shortNames: [wd]', 'shortNames: [wd, wdg]'));
    const [patch] = writes();
    expect(patch?.path).toBe('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com');
    expect(patch?.headers.contentType).toBe(legacy ? 'application/merge-patch+json' : 'application/strategic-merge-patch+json');
    expect(patch?.code).toBe(200);
  });

  it(`D-KCTL-4 ${label}: server-side apply of a built-in and a custom resource`, async () => {
    await ok(['apply', '--server-side', '-f', '-'], DEPLOYMENT('', 'web-ssa'));
    expect(writes().map((w) => w.headers.contentType)).toEqual(['application/apply-patch+yaml']);
    await ok(['apply', '--server-side', '-f', '-'], WIDGET('size: 4', 'w-ssa'));
    expect(writes().map((w) => w.headers.contentType)).toEqual(['application/apply-patch+yaml']);
    expect(cluster.store.get({ apiVersion: 'example.com/v1', kind: 'Widget' }, 'w-ssa')?.['spec']).toMatchObject({ size: 4 });
  });
});
