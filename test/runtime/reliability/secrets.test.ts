/**
 * Secret values kept out of the diff-base, logs and events (R-SEC-18..20), with a real operator
 * on the devcluster: change handlers on Secrets at DEBUG level (`--debug`: the client's low-level
 * logs too) with per-object log messages posted as events. The annotation holds digests, the diff
 * still names the key that changed, no captured log line and no posted event holds a value (as
 * base64 or plain), and a diff-base Kopf wrote with the values is taken over without a change.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';
import * as YAML from 'yaml';

import * as logins from '../../../runtime/cogs/client/logins.js';

import * as diffbase from '../../../runtime/cogs/configs/diffbase.js';
import * as logging from '../../../runtime/core/actions/logging.js';
import { OperatorRegistry } from '../../../runtime/core/intents/registry.js';
import { on } from '../../../runtime/on.js';
import { tempDir } from '../../support/cluster.js';
import * as fx from '../../support/operators.js';

const SECRETS = { group: '', version: 'v1', resource: 'secrets' } as const;
const EVENTS = { group: '', version: 'v1', resource: 'events' } as const;
const LHC = 'kopf.zalando.org/last-handled-configuration';
const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** The values that must never show up, as written and as base64. */
const PASSWORD_1 = 'first-password-8d1c7f';
const PASSWORD_2 = 'second-password-5b2e9a';
const USER = 'db-admin-user-3f4a';
const API_KEY = 'plain-api-key-7e6d5c';
const GENERATED = 'generated-token-0a9b8c';
const VALUES = [PASSWORD_1, PASSWORD_2, USER, API_KEY, GENERATED];
const FORMS = VALUES.flatMap((value) => [value, b64(value)]);

type Body = Record<string, unknown> & { metadata?: { annotations?: Record<string, string> } };

function found(texts: readonly string[]): string[] {
  return texts.filter((text) => FORMS.some((form) => text.includes(form)));
}

describe('secret values on a live operator', () => {
  const suite = fx.clusterPerTest();
  const { logs } = suite;

  const stored = (name: string): Body => suite.cluster.store.get(SECRETS, name, 'default') as Body;
  /** Every text a reader of the logs sees: messages and the traces printed after them. */
  const logTexts = (): string[] => logs.records.flatMap((r) => [r.message, ...(r.error === undefined ? [] : [logging.traceOf(r.error)])]);
  const eventTexts = (): string[] => suite.cluster.store.list(EVENTS, 'default').map((event) => JSON.stringify(event));

  function debugSettings() {
    return fx.fastSettings((s) => {
      s.posting.enabled = true;
      s.posting.loggers = true;
      s.posting.level = 10;
    });
  }

  it('R-SEC-18 R-SEC-20 the diff-base holds digests; the diff names the changed key; logs and events at DEBUG hold no value', async () => {
    logging.configure({ debug: true });
    const registry = new OperatorRegistry();
    const diffs: unknown[] = [];
    on.create('secrets', { registry }, function create_fn({ body, logger, patch }) {
      logger.info(`Created with keys ${Object.keys((body['data'] as object) ?? {}).join(',')}.`);
      // A handler writing a value: the merge-patch is logged at DEBUG, and stringData never comes back.
      (patch as Record<string, unknown>)['stringData'] = { generated: GENERATED };
    });
    on.update('secrets', { registry }, function update_fn({ name, diff }) {
      diffs.push([name, diff.map((item) => [...item])]);
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, settings: debugSettings(), waitForWatch: 'secrets' });
    await suite.cluster.store.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', namespace: 'default' },
      data: { password: b64(PASSWORD_1), user: b64(USER) },
    });
    await suite.cluster.store.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'api', namespace: 'default' }, stringData: { key: API_KEY } });
    await fx.eventually(
      () => stored('db').metadata?.annotations?.[LHC] !== undefined && stored('api').metadata?.annotations?.[LHC] !== undefined,
      'both handled',
    );
    await fx.atRest(logs, 'db');
    await fx.atRest(logs, 'api');

    // The key the create handler added came back as an update of each.
    const updates = (): [string, [string, string[], string, string][]][] => diffs as [string, [string, string[], string, string][]][];
    await fx.eventually(() => updates().length === 2, 'the added keys seen');
    expect(updates().map(([name, diff]) => [name, diff.map(([op, field]) => [op, field])])).toEqual(
      expect.arrayContaining([
        ['db', [['add', ['data', 'generated']]]],
        ['api', [['add', ['data', 'generated']]]],
      ]),
    );
    await fx.atRest(logs, 'db');

    await suite.cluster.store.patch(SECRETS, 'db', { data: { password: b64(PASSWORD_2) } }, { namespace: 'default', type: 'merge-patch' });
    await fx.eventually(() => updates().length === 3, 'the update handled');
    await fx.atRest(logs, 'db');
    await op.stop();
    expect(op.error).toBeUndefined();

    // The diff names the key that changed, old and new as digests.
    const [name, diff] = updates()[2] ?? ['', []];
    expect(name).toBe('db');
    expect(diff.map(([op, field]) => [op, field])).toEqual([['change', ['data', 'password']]]);
    for (const [, , old, now] of diff) {
      expect(old).toMatch(/^kopf-gen\/secret:sha256:[0-9a-f]{64}$/);
      expect(now).toMatch(/^kopf-gen\/secret:sha256:[0-9a-f]{64}$/);
      expect(old).not.toBe(now);
    }
    // The annotations hold no value; the diff-base has a digest per key.
    for (const secret of ['db', 'api']) {
      const annotations = stored(secret).metadata?.annotations ?? {};
      expect(found(Object.values(annotations))).toEqual([]);
      const essence = JSON.parse(annotations[LHC] ?? '{}') as { data: Record<string, string> };
      for (const value of Object.values(essence.data)) expect(value).toMatch(/^kopf-gen\/secret:sha256:/);
    }
    expect(Object.keys((JSON.parse(stored('db').metadata?.annotations?.[LHC] ?? '{}') as { data: object }).data).sort()).toEqual([
      'generated',
      'password',
      'user',
    ]);
    // The logs were at DEBUG (bodies, patches, diffs logged), and hold no value.
    expect(logs.grep('is in progress: ').length).toBeGreaterThan(0);
    expect(logs.grep('Merge-patching the resource with: ').length).toBeGreaterThan(0);
    expect(logs.grep('<redacted ').length).toBeGreaterThan(0);
    expect(found(logTexts())).toEqual([]);
    // Events were posted from log lines at DEBUG, and hold no value.
    expect(eventTexts().filter((text) => text.includes('"reason":"Logging"')).length).toBeGreaterThan(0);
    expect(found(eventTexts())).toEqual([]);
    // The token the operator logged in with is nowhere either.
    expect(logTexts().filter((text) => text.includes(suite.cluster.token))).toEqual([]);
    expect(eventTexts().filter((text) => text.includes(suite.cluster.token))).toEqual([]);
  });

  it('R-SEC-19 a diff-base Kopf wrote with the values is rewritten with digests, without a change reported', async () => {
    await suite.cluster.store.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'legacy', namespace: 'default' },
      data: { password: b64(PASSWORD_1) },
    });
    // What Kopf stores after handling it: the essence with the values, byte-compatible.
    const kopfEssence = new diffbase.AnnotationsDiffBaseStorage().build({ body: stored('legacy') });
    await suite.cluster.store.patch(
      SECRETS,
      'legacy',
      { metadata: { annotations: { [LHC]: `${diffbase.encodeEssence(kopfEssence)}\n` } } },
      { namespace: 'default', type: 'merge-patch' },
    );
    expect(stored('legacy').metadata?.annotations?.[LHC]).toContain(b64(PASSWORD_1));

    const registry = new OperatorRegistry();
    const calls: string[] = [];
    on.create('secrets', { registry }, function create_fn() {
      calls.push('create');
    });
    on.update('secrets', { registry }, function update_fn({ diff }) {
      calls.push(`update ${JSON.stringify(diff.map((item) => item.field))}`);
    });
    const op = await fx.startOperator({ cluster: suite.cluster, registry, waitForWatch: 'secrets' });
    await fx.eventually(() => !(stored('legacy').metadata?.annotations?.[LHC] ?? '').includes(b64(PASSWORD_1)), 'the diff-base rewritten');
    await fx.atRest(logs, 'legacy');
    expect(calls).toEqual([]);
    expect(found(Object.values(stored('legacy').metadata?.annotations ?? {}))).toEqual([]);

    await suite.cluster.store.patch(SECRETS, 'legacy', { data: { password: b64(PASSWORD_2) } }, { namespace: 'default', type: 'merge-patch' });
    await fx.eventually(() => calls.length === 1, 'the update handled');
    await fx.atRest(logs, 'legacy');
    await op.stop();
    expect(op.error).toBeUndefined();
    expect(calls).toEqual(['update [["data","password"]]']);
  });

  it('R-SEC-20 exec plugin tokens and client keys never appear in DEBUG logs or events', async () => {
    const cluster = await suite.restartCluster({ tls: true, auth: 'enforced' });
    const EXEC_TOKEN = 'exec-token-4c3b2a19f8e7';
    cluster.auth.addToken({ token: EXEC_TOKEN, username: 'exec-user', groups: ['system:masters'] });
    const pair = await cluster.auth.issueClientCert({ username: 'cert-user', groups: ['system:masters'] });
    const dir = tempDir();
    const plugin = path.join(dir, 'plugin.mjs');
    const credential = { apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: EXEC_TOKEN } };
    fs.writeFileSync(plugin, `console.log(${JSON.stringify(JSON.stringify(credential))});\n`);
    const users: Record<string, Record<string, unknown>> = {
      exec: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [plugin], interactiveMode: 'Never' } },
      cert: { 'client-certificate-data': Buffer.from(pair.certPem).toString('base64'), 'client-key-data': Buffer.from(pair.keyPem).toString('base64') },
    };
    // Distinctive parts of the key as written (PEM lines) and as put in the kubeconfig (base64).
    const keyLines = pair.keyPem.split('\n').filter((line) => line.length >= 40 && !line.startsWith('-----'));
    const keyForms = [...keyLines, Buffer.from(pair.keyPem).toString('base64').slice(20, 80)];
    for (const [user, entry] of Object.entries(users)) {
      logs.clear();
      logging.configure({ debug: true });
      const config = YAML.parse(cluster.kubeconfig()) as { users: { user: Record<string, unknown> }[] };
      for (const item of config.users) item.user = entry;
      const file = path.join(dir, `config-${user}`);
      fs.writeFileSync(file, YAML.stringify(config));
      const registry = new OperatorRegistry();
      on.login({ registry }, function login_fn() {
        return logins.loginWithKubeconfig({ paths: [file] });
      });
      on.create('secrets', { registry }, function create_fn({ logger }) {
        logger.info('Handled.');
      });
      const op = await fx.startOperator({ cluster, registry, settings: debugSettings(), waitForWatch: 'secrets' });
      await cluster.store.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `by-${user}`, namespace: 'default' }, data: { a: b64(USER) } });
      await fx.eventually(() => stored(`by-${user}`).metadata?.annotations?.[LHC] !== undefined, `by-${user} handled`);
      await fx.atRest(logs, `by-${user}`);
      await op.stop();
      expect(op.error).toBeUndefined();
      expect(cluster.requests.all.some((r) => r.user === `${user}-user`)).toBe(true);
      const texts = [...logTexts(), ...eventTexts()];
      expect(texts.length).toBeGreaterThan(10);
      expect(texts.filter((text) => text.includes(EXEC_TOKEN) || keyForms.some((form) => text.includes(form)))).toEqual([]);
      expect(found(texts)).toEqual([]);
    }
  });
});
