/**
 * What the tests of the command line share: the output of a command collected as one text, and a
 * folder of operator files (an ES-module package) beside a devcluster whose kubeconfig is exported
 * as `KUBECONFIG`, so that `kopf-gen run` and `KopfRunner` find both as a user's operator would.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll } from 'vitest';

import type { DevCluster } from '../../../../devcluster/testing.js';
import type * as cli from '../../../../runtime/kits/launching/commands.js';
import { exportKubeconfig, type ExportedKubeconfig, tempDir } from '../../../support/cluster.js';
import { startCluster } from '../../core/reactor/lifecycle.js';

const ON_MODULE = path.resolve(import.meta.dirname, '../../../../runtime/on.ts');
const ERRORS_MODULE = path.resolve(import.meta.dirname, '../../../../runtime/core/actions/errors.ts');

/** Collects what a command prints (both streams) as one text. */
export function captureOutput(): cli.CommandOutput & { text(): string } {
  let text = '';
  return {
    out: (t) => {
      text += t;
    },
    err: (t) => {
      text += t;
    },
    text: () => text,
  };
}

/** What a suite started with `useOperatorFolder()` reads in its tests. */
export interface OperatorFolder {
  /** The suite's devcluster. */
  readonly cluster: DevCluster;
  /** The folder of the operator files (also holding the kubeconfig). */
  readonly dir: string;
}

/**
 * Registers the `beforeAll`/`afterAll` hooks of a suite that runs operator files: a devcluster with
 * the reference CRD, its kubeconfig exported as `KUBECONFIG` and written into a fresh temporary
 * folder (named with `prefix`) that is an ES-module package. After the suite, `KUBECONFIG` is
 * restored and the cluster stops. Read `cluster` and `dir` inside the tests.
 */
export function useOperatorFolder(prefix: string): OperatorFolder {
  let current: { cluster: DevCluster; dir: string; exported: ExportedKubeconfig } | undefined;
  beforeAll(async () => {
    const cluster = await startCluster();
    const dir = tempDir(prefix);
    fs.writeFileSync(path.join(dir, 'package.json'), '{"type": "module"}\n');
    current = { cluster, dir, exported: exportKubeconfig(cluster, dir) };
  });
  afterAll(async () => {
    current?.exported.restore();
    await current?.cluster.stop();
  });
  const started = (): { cluster: DevCluster; dir: string } => {
    if (current === undefined) throw new Error('The devcluster exists only while the tests of the suite run.');
    return current;
  };
  return {
    get cluster() {
      return started().cluster;
    },
    get dir() {
      return started().dir;
    },
  };
}

/** Writes an operator file into `dir`: `body` with `on` and the `errors` module imported. */
export function operatorFile(dir: string, name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `import { on } from ${JSON.stringify(ON_MODULE)};\nimport * as errors from ${JSON.stringify(ERRORS_MODULE)};\n${body}\n`);
  return file;
}
