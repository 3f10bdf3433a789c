/** `kopf-gen init`: creates a project from CRDs (a thin layer over the library's `init`). */
import * as generator from '../index.js';
import * as reporting from './reporting.js';

export interface InitCommandOptions {
  crd: string[];
  out?: string;
  name?: string;
  /** `--namespace` values: the namespaces to serve (none: all). */
  namespace?: string[];
  force?: boolean;
  /** `--webhooks`: stubs with a validating admission handler. */
  webhooks?: boolean;
  /** `--max-input-mib`, in bytes. */
  maxInputMib?: number;
  /** `--lease`: the Lease of leader election (in the Deployment's args, with its RBAC). */
  lease?: string;
  /** `--handlers`: the kind of handler stubs (`cause`, `reconcile`). */
  handlers?: string;
}

/** Runs `kopf-gen init`. */
export async function run(opts: InitCommandOptions, output: reporting.Output = reporting.processOutput): Promise<void> {
  const maxInputBytes = opts.maxInputMib ?? generator.MAX_INPUT_BYTES;
  const crds = await reporting.crdSources(opts.crd, output, maxInputBytes);
  const report = await generator.init({
    crds,
    maxInputBytes,
    out: opts.out ?? defaultOut(crds),
    force: opts.force === true,
    webhooks: opts.webhooks === true,
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    ...(opts.namespace !== undefined ? { namespaces: opts.namespace } : {}),
    ...(opts.lease !== undefined ? { lease: opts.lease } : {}),
    ...(opts.handlers !== undefined ? { handlers: opts.handlers } : {}),
  });
  reporting.printReport(report, output, { verb: 'created' });
}

/** `<first CRD file's stem>-operator`, or `operator` for stdin. */
function defaultOut(crds: readonly generator.CrdSource[]): string {
  const first = crds[0];
  if (typeof first !== 'string') return 'operator';
  const stem = first
    .split(/[\\/]/)
    .pop()!
    .replace(/\.(ya?ml|json)$/i, '')
    .replace(/[^A-Za-z0-9-]+/g, '-')
    .toLowerCase();
  return stem ? `${stem}-operator` : 'operator';
}
