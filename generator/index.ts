/**
 * kopf-gen/generator — the generator as a library: `init`, `generate` and `add`.
 *
 * Each function reads what it needs (CRD files, the project's configuration, its handler modules),
 * runs the pure stages (pipeline.ts: load → validate → model → emit; scaffolding.ts: project
 * files), and only then writes, in one step (writing.ts). Any error — a bad CRD, a non-empty
 * output directory, a missing input — is thrown before anything is written. The CLI commands in
 * commands/ only parse flags, call these, and print the returned report.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as crdnames from './crdnames.js';
import * as accesses from './accesses.js';
import * as conversions from './conversions.js';
import * as detecting from './detecting.js';
import * as fields from './fields.js';
import * as inputs from './inputs.js';
import * as origins from './origins.js';
import * as loading from './loading.js';
import type * as modeling from './modeling.js';
import * as pipeline from './pipeline.js';
import * as projects from './projects.js';
import * as pruning from './pruning.js';
import * as scaffolding from './scaffolding.js';
import * as servers from './servers.js';
import * as stalesamples from './stalesamples.js';
import * as writing from './writing.js';

export { GeneratorError } from './errors.js';
export type { GeneratorErrorCode, SourceLocation } from './errors.js';
export { ProjectError } from './projects.js';
export type { ProjectErrorCode, ProjectConfig } from './projects.js';
export type { CrdSource } from './inputs.js';
export type { ChangeSummary, FieldChange } from './fields.js';
export { renderSummary } from './fields.js';
export { MAX_DEPTH, MAX_INPUT_BYTES } from './limits.js';

/** The root of this generator package (the checkout's `generator/` folder, or the installed package). */
export const PACKAGE_ROOT: string = origins.GENERATOR.root;

/** The version of this generator (kopf-gen's packages share one version). */
export const GENERATOR_VERSION: string = origins.GENERATOR.version;

/** The versions of the development tools a generated project installs. */
export const PROJECT_TOOL_VERSIONS = { typescript: '~5.9.3', tsx: '^4.23.15', vitest: '^3.2.7', typesNode: '^20.19.0' } as const;

export interface InitOptions {
  /** CRD files, or texts (e.g. stdin as `{ path: '<stdin>', text }`). */
  readonly crds: readonly inputs.CrdSource[];
  /** The project directory to create. */
  readonly out: string;
  /** The npm package name (default: the output directory's name). */
  readonly name?: string;
  /** Write into a non-empty directory, overwriting the files the generator writes. */
  readonly force?: boolean;
  /** The generated package.json's `kopf-gen` dependency (default: see `kopfGenDependency`). */
  readonly kopfGenDependency?: string;
  /** The generated package.json's `@kopf-gen/generator` development dependency (default: see `generatorDependency`). */
  readonly generatorDependency?: string;
  /**
   * The namespaces the operator serves (exact names, DNS-1123 labels); absent or empty: all
   * namespaces. Recorded in kopf-gen.json, so `generate` keeps binding the RBAC in them.
   */
  readonly namespaces?: readonly string[];
  /**
   * The Lease the operator elects its leader on (`--lease` in the Deployment's args), with its
   * RBAC in the operator's own namespace; absent: none, or the project's (`"lease"` in kopf-gen.json).
   */
  readonly lease?: string;
  /** Where relative CRD paths are read from (default: the working directory). */
  readonly cwd?: string;
  /**
   * The handler stubs also register a validating admission handler per kind, so the project
   * starts with its webhook manifests, the module that serves them, and a Deployment that mounts
   * their certificate.
   */
  readonly webhooks?: boolean;
  /**
   * The kind of handler stubs (`--handlers`): `"cause"` (the default) — Kopf's create, update,
   * delete and resume handlers per kind; `"reconcile"` — one `on.reconcile` handler per kind that
   * owns a Deployment, with a test that plays the Deployment's controller. Recorded in
   * kopf-gen.json (`"handlers"`), so kinds added later get the same; absent: the project's.
   */
  readonly handlers?: string;
  /**
   * The largest CRD file read, in bytes (default `MAX_INPUT_BYTES`, 16 MiB): a larger one is
   * refused, unread, with `input-too-large`.
   */
  readonly maxInputBytes?: number;
}

export interface GenerateOptions {
  /** The project directory (with kopf-gen.json). */
  readonly project: string;
  /**
   * The largest CRD file read, in bytes (default `MAX_INPUT_BYTES`, 16 MiB): a larger one is
   * refused, unread, with `input-too-large`.
   */
  readonly maxInputBytes?: number;
}

export interface AddOptions {
  readonly project: string;
  /** The CRDs to add (files or texts). */
  readonly crds: readonly inputs.CrdSource[];
  readonly cwd?: string;
  /**
   * The largest CRD file read, in bytes (default `MAX_INPUT_BYTES`, 16 MiB): a larger one is
   * refused, unread, with `input-too-large`.
   */
  readonly maxInputBytes?: number;
}

/** What a run did. */
export interface GenerationReport {
  /** The project directory, absolute. */
  readonly project: string;
  /** Every written file, relative to the project. */
  readonly written: readonly string[];
  /** Handler stubs added (relative paths). */
  readonly stubsAdded: readonly string[];
  /** CRD files copied into crds/ (relative paths). */
  readonly crdsAdded: readonly string[];
  /** Changes since the previous generation (everything is "added" for `init`). */
  readonly summary: fields.ChangeSummary;
  /** Skipped documents and versions, kinds that kept their handlers on a version change, … */
  readonly notes: readonly string[];
  /** Status pruning and similar problems that did not stop generation. */
  readonly warnings: readonly string[];
  /**
   * The built-in resources the code uses (handlers, a reconcile's owns/watches, client calls),
   * which deploy/rbac.yaml now covers, as `plural` (core group) or `plural.group`, e.g.
   * `configmaps`, `deployments.apps`.
   */
  readonly builtins: readonly string[];
  /**
   * The admission handlers the code registers, as `src/handlers/widget.ts:12 on.validate`; when
   * there are any, deploy/webhooks.yaml and src/generated/admission.ts serve them.
   */
  readonly admission: readonly string[];
  /**
   * The converters the code registers, as `src/conversions/release.v1.ts:24 on.convert`; when there
   * are any, src/generated/admission.ts serves them too, and deploy/conversion.yaml patches their CRDs.
   */
  readonly conversions: readonly string[];
  /** Converter stubs added (relative paths), one per non-hub served version of a CRD that serves several. */
  readonly convertersAdded: readonly string[];
  /** Generated files that no longer apply and were deleted (deploy/webhooks.yaml without admission handlers). */
  readonly removed: readonly string[];
  /**
   * Files the run would have written but left alone because they exist and are not the
   * generator's (relative paths): the user's handlers, tests, src/main.ts, README.md, … — for
   * `init --force` over an existing project, everything but the generated files. A package.json
   * that lacked scripts or dependencies the project needs is listed in `written` instead, with a
   * note naming what was added.
   */
  readonly kept: readonly string[];
}

/**
 * The `kopf-gen` dependency of a generated package.json: where the installed kopf-gen came from
 * (`file:` a checkout or a tarball, or a registry version range); see `origins.dependencySpecs`.
 */
export function kopfGenDependency(): string {
  return origins.dependencySpecs().kopfGen;
}

/**
 * The `@kopf-gen/generator` development dependency of a generated package.json, from where this
 * generator came from (as for `kopfGenDependency`).
 */
export function generatorDependency(): string {
  return origins.dependencySpecs().generator;
}

function projectInfo(
  name: string,
  namespaces: readonly string[],
  lease: string | undefined,
  dependencies: { kopfGen?: string | undefined; generator?: string | undefined } = {},
  webhookStubs = false,
  handlers: projects.HandlerStyle = projects.DEFAULT_HANDLER_STYLE,
  shards?: string,
): scaffolding.ProjectInfo {
  return {
    name,
    generatorVersion: GENERATOR_VERSION,
    namespaces,
    ...(lease !== undefined ? { lease } : {}),
    ...(shards !== undefined ? { shards } : {}),
    webhookStubs,
    handlers,
    kopfGenDependency: dependencies.kopfGen ?? kopfGenDependency(),
    generatorDependency: dependencies.generator ?? generatorDependency(),
    versions: PROJECT_TOOL_VERSIONS,
  };
}

/**
 * Creates a project from CRDs.
 *
 * With `force`, into a non-empty directory, never overwriting a file the generator does not own:
 * - over a kopf-gen project (with kopf-gen.json), it regenerates what is generated (src/generated/,
 *   deploy/rbac.yaml, deploy/webhooks.yaml, kopf-gen.json) from the given CRDs together with those
 *   already in crds/, adds stubs only for kinds no module registers, writes the project files that
 *   are missing, adds to package.json only the scripts and dependencies it lacks, and leaves every
 *   other existing file as it is (listed in the report's `kept`). Unset options (name,
 *   namespaces) keep the project's values from kopf-gen.json;
 * - in any other directory, the same, except that the generator owns nothing there yet: when
 *   src/generated/, deploy/rbac.yaml or deploy/webhooks.yaml exist, it refuses.
 * In both cases a file of crds/ that exists with another content than the given CRD's is refused.
 *
 * @throws GeneratorError for unusable CRDs; ProjectError `invalid-namespace`, `invalid-handlers`, `output-not-empty`
 *   (without `force`), `would-overwrite` (see above), `missing-input`, `not-a-file` (a `--crd`
 *   that is a FIFO, a directory, …), `no-input`, `duplicate-crd`, `invalid-project` (an unreadable
 *   kopf-gen.json), `no-output` (an empty `out`), `output-not-writable` (`out` cannot be created:
 *   below a file, in a read-only or unwritable place, or a symbolic link to nothing),
 *   `input-too-large` (a CRD file larger than `maxInputBytes`), `symlink-escape` (a file of the
 *   project would be written through a symbolic link that leads outside it). Nothing is written
 *   when it throws.
 */
export async function init(options: InitOptions): Promise<GenerationReport> {
  if (options.out === '') throw new projects.ProjectError('no-output', 'the output path is empty: give the directory to create the project in (--out DIR)');
  const root = path.resolve(options.out);
  if (projects.isNonDirectory(root)) throw new projects.ProjectError('output-not-empty', `${options.out} exists and is not a directory`);
  const occupied = projects.isNonEmptyDirectory(root);
  if (!options.force && occupied) {
    throw new projects.ProjectError('output-not-empty', `${options.out} is not empty; choose another --out or pass --force to write into it`);
  }
  if (!occupied) projects.checkCreatable(root, options.out);
  const config = occupied && fs.existsSync(path.join(root, projects.CONFIG_FILE)) ? projects.readConfig(root) : undefined;
  if (occupied && config === undefined) refuseForeignGeneratedFiles(root, options.out);
  const namespaces = projects.checkNamespaces(options.namespaces ?? config?.namespaces ?? []);
  const leaseName = options.lease ?? config?.lease;
  const lease = leaseName === undefined ? undefined : projects.checkLease(leaseName);
  const handlers = options.handlers !== undefined ? projects.checkHandlerStyle(options.handlers) : config?.handlers;
  const sources = inputs.readSources(options.crds, options.cwd, options.maxInputBytes);
  const given = pipeline.check(sources);
  const copies = inputs
    .crdFiles(sources, given.loaded, given.notes)
    .map((file) => ({ copy: { path: `${projects.CRDS_DIR}/${file.fileName}`, text: file.text }, source: file.source, documentIndices: file.documentIndices }));
  const notes = [...given.notes];
  const fresh = copies.filter((entry) => !sameFile(root, entry.copy, options.out));
  const existingCrds =
    config !== undefined ? readCrdFiles(root, options.maxInputBytes).filter((source) => !fresh.some((entry) => entry.copy.path === source.path)) : [];
  if (config === undefined && occupied) {
    const others = readCrdFiles(root, options.maxInputBytes).filter((source) => !copies.some((entry) => entry.copy.path === source.path));
    if (others.length > 0) {
      notes.push(
        `${others.map((source) => source.path).join(', ')}: not among the given CRDs, left alone; \`kopf-gen generate\` reads every CRD file in crds/`,
      );
    }
  }
  // In a project, the CRDs already in crds/ are inputs too (as for `add`); the given ones whose
  // copy is there already are among them.
  const generatedFrom = config !== undefined ? fresh : copies;
  const present = pipeline.check(existingCrds);
  const rechecked = pipeline.recheck(generatedFrom, given);
  pipeline.checkDuplicates(rechecked.loaded, new Map(present.loaded.map((crd) => [pipeline.crdNameOf(crd), loading.placeOf(crd)])));
  crdnames.checkNameConflicts(rechecked.loaded, present.loaded);
  const crdSources = [...existingCrds, ...generatedFrom.map((entry) => entry.copy)].sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  const analysis = pipeline.analyseChecked(crdSources, { loaded: [...present.loaded, ...rechecked.loaded], notes: [] });
  const info = projectInfo(
    projects.packageName(options.name ?? config?.name ?? path.basename(root)),
    namespaces,
    lease,
    { kopfGen: options.kopfGenDependency, generator: options.generatorDependency },
    options.webhooks === true,
    handlers,
    config?.shards,
  );
  const snapshot: Snapshot = occupied ? readSnapshot(root, crdSources) : { ...EMPTY_SNAPSHOT, root, crdSources };
  const planned = plan(snapshot, analysis, info);
  const files = [
    ...fresh.map((entry) => ({ path: entry.copy.path, text: entry.copy.text })),
    ...planned.files,
    ...scaffolding.projectFiles(info, planned.kinds, [...planned.admission, ...planned.conversions], planned.pruning),
  ];
  const safe = leaveUserFiles(root, files);
  const written = writing.applyPlan({ root, files: safe.files, replaceDirs: [projects.GENERATED_DIR], removeFiles: planned.removed });
  return {
    project: root,
    written,
    stubsAdded: planned.stubsAdded.filter((file) => written.includes(file)),
    crdsAdded: fresh.map((entry) => entry.copy.path),
    summary: planned.summary,
    notes: [...notes, ...present.notes, ...planned.notes, ...safe.notes],
    warnings: [...planned.warnings, ...safe.warnings],
    builtins: planned.builtins,
    admission: planned.admission.map(scaffolding.describeRegistration),
    conversions: planned.conversions.map(scaffolding.describeRegistration),
    convertersAdded: planned.convertersAdded.filter((file) => written.includes(file)),
    removed: planned.removed,
    // Besides what it would have written, the user's code where a new project has its stubs and tests.
    kept: [
      ...new Set([...copies.filter((entry) => !fresh.includes(entry)).map((entry) => entry.copy.path), ...snapshot.existing, ...planned.kept, ...safe.kept]),
    ].sort(),
  };
}

/**
 * Whether a copy of a given CRD is already in crds/ with the same content (then it is not written).
 *
 * @throws ProjectError `would-overwrite` when the file exists with another content.
 */
function sameFile(root: string, copy: loading.SourceText, out: string): boolean {
  const target = path.join(root, ...copy.path.split('/'));
  if (!fs.existsSync(target)) return false;
  if (fs.readFileSync(target, 'utf8') === copy.text) return true;
  throw new projects.ProjectError(
    'would-overwrite',
    `${path.join(out, copy.path)} exists with another content than the given CRD; kopf-gen never overwrites the CRD files of crds/: ` +
      'replace it yourself and run `kopf-gen generate`, or give the CRD under another file name',
  );
}

/**
 * In a directory that is not a kopf-gen project, the files every generation rewrites must not
 * exist yet: they would be someone else's.
 *
 * @throws ProjectError `would-overwrite`, naming them.
 */
function refuseForeignGeneratedFiles(root: string, out: string): void {
  const found = [
    ...listFiles(root, projects.GENERATED_DIR),
    ...[projects.RBAC_FILE, projects.WEBHOOKS_FILE, projects.CONVERSION_FILE, projects.DEVELOPMENT_RBAC_FILE].filter((file) =>
      fs.existsSync(path.join(root, file)),
    ),
  ];
  if (found.length === 0) return;
  const shown = found.length > 5 ? `${found.slice(0, 5).join(', ')}, …` : found.join(', ');
  throw new projects.ProjectError(
    'would-overwrite',
    `${out} is not a kopf-gen project (it has no ${projects.CONFIG_FILE}) and init would overwrite ${shown}; kopf-gen never overwrites files it did not generate`,
  );
}

/**
 * Takes out of a plan every existing file the generator does not own (see
 * `projects.isGeneratedFile`): those are the user's, and stay as they are. The user's package.json
 * gets the scripts and dependencies it lacks (`projects.mergePackageJson`), nothing else.
 */
function leaveUserFiles(
  root: string,
  files: readonly scaffolding.PlannedFile[],
): { files: scaffolding.PlannedFile[]; kept: string[]; notes: string[]; warnings: string[] } {
  const result = { files: [] as scaffolding.PlannedFile[], kept: [] as string[], notes: [] as string[], warnings: [] as string[] };
  for (const file of files) {
    const target = path.join(root, ...file.path.split('/'));
    if (projects.isGeneratedFile(file.path) || !fs.existsSync(target)) {
      result.files.push(file);
      continue;
    }
    if (file.path !== 'package.json') {
      result.kept.push(file.path);
      continue;
    }
    const merge = projects.mergePackageJson(fs.readFileSync(target, 'utf8'), file.text);
    if (!merge.ok) {
      result.kept.push(file.path);
      result.warnings.push(`package.json left alone: ${merge.reason}; the project needs the scripts and dependencies of a generated package.json`);
    } else if (merge.text === undefined) {
      result.kept.push(file.path);
    } else {
      result.files.push({ path: file.path, text: merge.text });
      result.notes.push(`package.json: added what the project needs and it lacked (${merge.added.join(', ')}); nothing of yours was changed`);
    }
  }
  return result;
}

/**
 * Regenerates a project from its kopf-gen.json and crds/: rewrites src/generated/ and
 * deploy/rbac.yaml (with rules for the built-in resources the code in src/ watches, bound in the
 * namespaces kopf-gen.json names), writes deploy/webhooks.yaml while the code registers admission
 * handlers (and deletes it when none is left), adds handler stubs (and tests) for kinds that have
 * no handlers, never modifies user code, and reports what changed since the last generation —
 * with a warning when deploy/deployment.yaml lacks what serving webhooks needs.
 *
 * @throws ProjectError `not-a-project`, `invalid-project`, `input-too-large`, `symlink-escape`
 *   (see `init`); GeneratorError for unusable CRDs. Nothing is written when it throws.
 */
export async function generate(options: GenerateOptions): Promise<GenerationReport> {
  const { snapshot, config } = readProject(path.resolve(options.project), options.maxInputBytes);
  const analysis = pipeline.analyse(snapshot.crdSources);
  const info = projectInfo(config.name, config.namespaces, config.lease, {}, false, config.handlers, config.shards);
  const planned = plan(snapshot, analysis, info);
  const safe = leaveUserFiles(snapshot.root, planned.files);
  const written = writing.applyPlan({ root: snapshot.root, files: safe.files, replaceDirs: [projects.GENERATED_DIR], removeFiles: planned.removed });
  return {
    project: snapshot.root,
    written,
    stubsAdded: planned.stubsAdded.filter((file) => written.includes(file)),
    crdsAdded: [],
    summary: planned.summary,
    notes: [...analysis.notes, ...planned.notes, ...safe.notes],
    warnings: [...planned.warnings, ...safe.warnings],
    builtins: planned.builtins,
    admission: planned.admission.map(scaffolding.describeRegistration),
    conversions: planned.conversions.map(scaffolding.describeRegistration),
    convertersAdded: planned.convertersAdded.filter((file) => written.includes(file)),
    removed: planned.removed,
    kept: [...new Set([...planned.kept, ...safe.kept])].sort(),
  };
}

/**
 * Adds CRDs to a project (copies them into crds/), then generates.
 *
 * @throws ProjectError `not-a-project`, `missing-input`, `duplicate-crd` (a CRD the project has),
 *   `input-too-large`, `symlink-escape` (see `init`); GeneratorError for unusable CRDs. Nothing
 *   is written when it throws.
 */
export async function add(options: AddOptions): Promise<GenerationReport> {
  const { snapshot, config } = readProject(path.resolve(options.project), options.maxInputBytes);
  const sources = inputs.readSources(options.crds, options.cwd, options.maxInputBytes);
  const given = pipeline.check(sources);
  const present = pipeline.check(snapshot.crdSources);
  pipeline.checkDuplicates(given.loaded, new Map(present.loaded.map((crd) => [pipeline.crdNameOf(crd), loading.placeOf(crd)])));
  crdnames.checkNameConflicts(given.loaded, present.loaded);
  const taken = snapshot.crdSources.map((source) => path.posix.basename(source.path));
  const copies = inputs
    .crdFiles(sources, given.loaded, given.notes, taken)
    .map((file) => ({ copy: { path: `${projects.CRDS_DIR}/${file.fileName}`, text: file.text }, source: file.source, documentIndices: file.documentIndices }));
  const added = copies.map((entry) => entry.copy);
  const next: Snapshot = { ...snapshot, crdSources: [...snapshot.crdSources, ...added] };
  const rechecked = pipeline.recheck(copies, given);
  const analysis = pipeline.analyseChecked(next.crdSources, {
    loaded: [...present.loaded, ...rechecked.loaded],
    notes: [...present.notes, ...rechecked.notes],
  });
  const planned = plan(next, analysis, projectInfo(config.name, config.namespaces, config.lease, {}, false, config.handlers, config.shards));
  const files = [...added.map((source) => ({ path: source.path, text: source.text })), ...planned.files];
  const safe = leaveUserFiles(snapshot.root, files);
  const written = writing.applyPlan({ root: snapshot.root, files: safe.files, replaceDirs: [projects.GENERATED_DIR], removeFiles: planned.removed });
  return {
    project: snapshot.root,
    written,
    stubsAdded: planned.stubsAdded.filter((file) => written.includes(file)),
    crdsAdded: added.map((source) => source.path),
    summary: planned.summary,
    notes: [...given.notes, ...planned.notes, ...safe.notes],
    warnings: [...planned.warnings, ...safe.warnings],
    builtins: planned.builtins,
    admission: planned.admission.map(scaffolding.describeRegistration),
    conversions: planned.conversions.map(scaffolding.describeRegistration),
    convertersAdded: planned.convertersAdded.filter((file) => written.includes(file)),
    removed: planned.removed,
    kept: [...new Set([...planned.kept, ...safe.kept])].sort(),
  };
}

/** What the planner knows about a project on disk. */
interface Snapshot {
  readonly root: string;
  /** The CRD files, with project-relative paths (`crds/x.yaml`). */
  readonly crdSources: readonly loading.SourceText[];
  /** The modules of src/ outside src/generated/ (handlers, main.ts, the user's own): where registrations live. */
  readonly userModules: readonly detecting.UserModule[];
  /** The TypeScript files of test/: they register nothing, but may import what is no longer generated. */
  readonly testModules: readonly detecting.UserModule[];
  /** Project-relative paths of existing files in src/handlers/, test/ and samples/. */
  readonly existing: ReadonlySet<string>;
  /** The sample files (`samples/*.yaml`, `*.yml`, `*.json`, up to 1 MiB each: larger ones are no samples of kopf-gen's). */
  readonly sampleFiles: readonly stalesamples.SampleFile[];
  readonly manifestText: string | undefined;
  /** The last generation's src/generated/index.ts (read when the manifest does not record the index's exports). */
  readonly indexText: string | undefined;
  /** The user's deploy/deployment.yaml, if there is one. */
  readonly deploymentText: string | undefined;
  /** Whether deploy/webhooks.yaml exists. */
  readonly webhooksFile: boolean;
  /** Whether deploy/conversion.yaml exists. */
  readonly conversionFile?: boolean;
  /** Whether test/rbac-development.yaml exists. */
  readonly developmentRbacFile?: boolean;
}

const EMPTY_SNAPSHOT: Omit<Snapshot, 'root' | 'crdSources'> = {
  userModules: [],
  testModules: [],
  existing: new Set(),
  sampleFiles: [],
  manifestText: undefined,
  indexText: undefined,
  deploymentText: undefined,
  webhooksFile: false,
};

function readProject(root: string, maxInputBytes?: number): { snapshot: Snapshot; config: projects.ProjectConfig } {
  const config = projects.readConfig(root);
  const crdSources = readCrdFiles(root, maxInputBytes);
  if (crdSources.length === 0)
    throw new projects.ProjectError('invalid-project', `${path.join(root, projects.CRDS_DIR)}: no CRD files (*.yaml, *.yml, *.json)`);
  return { snapshot: readSnapshot(root, crdSources), config };
}

/** The CRD files of crds/, sorted by name, with project-relative paths. */
function readCrdFiles(root: string, maxInputBytes?: number): loading.SourceText[] {
  const crdsDir = path.join(root, projects.CRDS_DIR);
  const crdNames = fs.existsSync(crdsDir)
    ? fs
        .readdirSync(crdsDir)
        .filter((name) => inputs.CRD_FILE_PATTERN.test(name) && fs.statSync(path.join(crdsDir, name)).isFile())
        .sort()
    : [];
  return crdNames.map((name) => {
    const file = `${projects.CRDS_DIR}/${name}`;
    return { path: file, text: inputs.readProjectCrd(path.join(crdsDir, name), file, maxInputBytes) };
  });
}

/** Reads what the planner needs from a directory (a project, or any directory `init --force` writes into). */
function readSnapshot(root: string, crdSources: readonly loading.SourceText[]): Snapshot {
  const existing = new Set([
    ...listFiles(root, projects.HANDLERS_DIR),
    ...listFiles(root, conversions.CONVERSIONS_DIR),
    ...listFiles(root, projects.TESTS_DIR),
    ...listFiles(root, projects.SAMPLES_DIR),
  ]);
  const read = (file: string): detecting.UserModule => ({ path: file, text: fs.readFileSync(path.join(root, file), 'utf8') });
  const userModules = listFiles(root, 'src')
    .filter((file) => !file.startsWith(`${projects.GENERATED_DIR}/`) && isModule(file))
    .map(read);
  const testModules = listFiles(root, projects.TESTS_DIR)
    .filter((file) => /\.(ts|mts)$/.test(file) && !/\.d\.(ts|mts)$/.test(file))
    .map(read);
  const manifestPath = path.join(root, projects.MANIFEST_FILE);
  const manifestText = fs.existsSync(manifestPath) ? fs.readFileSync(manifestPath, 'utf8') : undefined;
  const indexPath = path.join(root, projects.GENERATED_DIR, 'index.ts');
  const indexText = fs.existsSync(indexPath) ? fs.readFileSync(indexPath, 'utf8') : undefined;
  const deploymentPath = path.join(root, scaffolding.DEPLOYMENT_FILE);
  const deploymentText = fs.existsSync(deploymentPath) ? fs.readFileSync(deploymentPath, 'utf8') : undefined;
  const webhooksFile = fs.existsSync(path.join(root, scaffolding.WEBHOOKS_FILE));
  const conversionFile = fs.existsSync(path.join(root, scaffolding.CONVERSION_FILE));
  const developmentRbacFile = fs.existsSync(path.join(root, projects.DEVELOPMENT_RBAC_FILE));
  const sampleFiles = [...existing]
    .filter((file) => file.startsWith(`${projects.SAMPLES_DIR}/`) && inputs.CRD_FILE_PATTERN.test(file))
    .filter((file) => fs.statSync(path.join(root, file)).size <= SAMPLE_FILE_LIMIT)
    .map((file) => ({ path: file, text: fs.readFileSync(path.join(root, file), 'utf8') }));
  return {
    root,
    crdSources,
    userModules,
    testModules,
    existing,
    sampleFiles,
    manifestText,
    indexText,
    deploymentText,
    webhooksFile,
    conversionFile,
    developmentRbacFile,
  };
}

/** The largest sample file read for stale versions (a sample kopf-gen wrote is a few KiB). */
const SAMPLE_FILE_LIMIT = 1024 * 1024;

/** Project-relative paths of the files under a directory (recursively). */
function listFiles(root: string, dir: string): string[] {
  const full = path.join(root, dir);
  if (!fs.existsSync(full)) return [];
  return (fs.readdirSync(full, { recursive: true, withFileTypes: true }) as fs.Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
}

function isModule(file: string): boolean {
  return /\.(ts|mts)$/.test(file) && !/\.d\.(ts|mts)$/.test(file) && !/\.test\.(ts|mts)$/.test(file);
}

interface Planned {
  readonly files: scaffolding.PlannedFile[];
  readonly kinds: scaffolding.KindPlan[];
  readonly stubsAdded: string[];
  readonly summary: fields.ChangeSummary;
  readonly notes: string[];
  /** The watched built-in resources, as the report names them. */
  readonly builtins: string[];
  /** The admission handlers of the user's code and the added stubs. */
  readonly admission: detecting.AdmissionRegistration[];
  /** The converters (on.convert) of the user's code and the added converter stubs. */
  readonly conversions: detecting.AdmissionRegistration[];
  /** Converter stubs added (relative paths). */
  readonly convertersAdded: string[];
  /** Generated files to delete. */
  readonly removed: string[];
  readonly warnings: string[];
  /** Per-kind files of added stubs that exist already (left alone). */
  readonly kept: string[];
  /** The status-pruning warnings (also among `warnings`), for the README of a new project. */
  readonly pruning: string[];
}

/**
 * Plans the generated files and the stubs of kinds without handlers (pure apart from templates).
 *
 * A kind gets a stub only when no module of src/ refers to any of its versions' descriptors (see
 * detecting.ts) — nor to a generated module or index name of it that no longer exists, as after a
 * version rename: that module has the kind's handlers, and only its import needs editing, which a
 * warning names (file and line). A second stub would register the same handler ids again.
 */
function plan(snapshot: Snapshot, analysis: pipeline.Analysis, info: scaffolding.ProjectInfo): Planned {
  const manifest = fields.parseManifest(snapshot.manifestText);
  const previous = manifest && { ...manifest, index: manifest.index ?? recordedIndex(snapshot.indexText, manifest, analysis.model) };
  const entries = scaffolding.indexEntries(analysis.model, analysis.modules, previous?.index ?? {});
  const indexNames = new Set(
    entries.flatMap((entry, index) => [entry.namespace, ...(entry.flat ? detecting.exportedNames(analysis.modules[index]!.text) : [])]),
  );
  const references = detecting.scanReferences(snapshot.userModules, entries, indexNames);
  const testStale = detecting.scanReferences(snapshot.testModules, entries, indexNames).stale;
  const handlerPaths = [...snapshot.existing].filter((file) => file.startsWith(`${projects.HANDLERS_DIR}/`));
  const kinds = scaffolding.kindPlans(analysis.model, analysis.modules, handlerPaths);
  const crdFiles = snapshot.crdSources.map((source) => source.path).sort();
  const files: scaffolding.PlannedFile[] = [];
  const stubsAdded: string[] = [];
  const notes: string[] = [];
  const kept: string[] = [];
  const formerOwner = (stale: detecting.StaleImport): string | undefined => formerCrd(stale, previous?.index ?? {}, analysis.model);
  const warnings = [...references.stale, ...testStale].map((stale) => describeStale(stale, formerOwner(stale), entries));
  for (const kind of kinds) {
    const covered = kind.fileNames.filter((fileName) => references.referenced.has(fileName));
    if (covered.length > 0) {
      if (!covered.includes(kind.fileName)) notes.push(`${kind.crdName}: handlers use ${covered.join(', ')}, not the preferred version ${kind.version}`);
      continue;
    }
    const formerly = references.stale.filter((stale) => formerOwner(stale) === kind.crdName);
    if (formerly.length > 0) {
      const places = [...new Set(formerly.map((stale) => `${stale.path}:${stale.line}`))].join(', ');
      notes.push(
        `${kind.crdName}: no handler stub added, ${places} refer${formerly.length === 1 ? 's' : ''} to it through what is no longer generated (see the warnings)`,
      );
      continue;
    }
    for (const file of scaffolding.kindFiles(kind, info, crdFiles)) {
      if (snapshot.existing.has(file.path)) {
        kept.push(file.path);
        continue;
      }
      files.push(file);
      if (file.path === kind.handlerPath) stubsAdded.push(file.path);
      if (file.path === kind.samplePath) notes.push(...kind.sampleNotes.map((note) => `${kind.samplePath}: ${note}`));
    }
  }
  files.push(...staleSamples(snapshot, analysis.model, kinds, info, warnings));
  const converters = converterStubs(snapshot, analysis.model, entries, info, crdFiles, notes, kept);
  files.push(...converters.files);
  const handlerModules = [...new Set([...handlerPaths.filter(isModule), ...stubsAdded])];
  const conversionModules = [
    ...new Set([...[...snapshot.existing].filter((file) => file.startsWith(`${conversions.CONVERSIONS_DIR}/`) && isModule(file)), ...converters.added]),
  ];
  const stubs = files.filter((file) => stubsAdded.includes(file.path) || converters.added.includes(file.path));
  const used = accesses.scan([...snapshot.userModules, ...stubs], entries);
  warnings.push(...used.unfollowed.map(accesses.describeUnfollowed));
  const watchedBuiltins = accesses.builtinKinds(used.accesses);
  const admission = detecting.admissionRegistrations([...snapshot.userModules, ...stubs]);
  const conversion = convertedCrds([...snapshot.userModules, ...stubs], entries, analysis.model);
  warnings.push(...unconvertedWarnings(analysis.model, conversion));
  const pruning = pruningWarnings(analysis.model, entries, [...snapshot.userModules, ...stubs]);
  warnings.push(...pruning);
  files.push(...scaffolding.generatedFiles(analysis, info, crdFiles, handlerModules, used.accesses, admission, entries, conversion, conversionModules));
  const summary = fields.compare(previous, fields.buildManifest(analysis.model, info.generatorVersion, entries));
  const builtins = watchedBuiltins.map((resource) => (resource.group === '' ? resource.plural : `${resource.plural}.${resource.group}`));
  const serving = admission.length > 0 || conversion.registrations.length > 0;
  const removed = [
    ...(!serving && snapshot.webhooksFile ? [scaffolding.WEBHOOKS_FILE] : []),
    ...(conversion.crds.length === 0 && snapshot.conversionFile === true ? [scaffolding.CONVERSION_FILE] : []),
    ...(conversion.crds.length === 0 && snapshot.developmentRbacFile === true ? [projects.DEVELOPMENT_RBAC_FILE] : []),
  ];
  if (serving && snapshot.deploymentText !== undefined) {
    const missing = servers.checkDeployment(snapshot.deploymentText, servers.webhookNames(scaffolding.kubeName(info.name)));
    if (missing.length > 0) {
      warnings.push(
        `${scaffolding.DEPLOYMENT_FILE} cannot serve the ${admission.length > 0 ? 'admission' : 'conversion'} webhooks in the cluster: it lacks ${missing.join('; ')}. ` +
          'kopf-gen never rewrites it: add them as the README\'s "Admission webhooks" section shows, then apply deploy/webhooks.yaml and the Deployment.',
      );
    }
  }
  warnings.push(...leaseWarnings(snapshot.deploymentText, info.lease));
  warnings.push(...shardWarnings(snapshot.deploymentText, info.shards));
  if (info.shards !== undefined && info.lease !== undefined) {
    warnings.push(
      `kopf-gen.json names both the Lease "${info.lease}" and the ring "${info.shards}": an operator runs with --lease or with --shards, never both (sharding replaces leader election); remove one of them.`,
    );
  }
  return {
    files,
    kinds,
    stubsAdded,
    summary,
    notes,
    builtins,
    admission,
    conversions: [...conversion.registrations],
    convertersAdded: converters.added,
    removed,
    warnings,
    kept,
    pruning,
  };
}

/**
 * The converter stubs (and their tests) of every non-hub served version of a CRD that serves
 * several (conversions.ts), except where the stub exists already (kept), or where a module of
 * src/ already registers a converter that refers to that version's generated module (noted).
 */
function converterStubs(
  snapshot: Snapshot,
  model: modeling.GeneratorModel,
  entries: readonly scaffolding.IndexEntry[],
  info: scaffolding.ProjectInfo,
  crdFiles: readonly string[],
  notes: string[],
  kept: string[],
): { files: scaffolding.PlannedFile[]; added: string[] } {
  const files: scaffolding.PlannedFile[] = [];
  const added: string[] = [];
  const converting = snapshot.userModules.filter((module) => detecting.conversionRegistrations([module]).length > 0);
  const converted = detecting.scanReferences(converting, entries).referenced;
  for (const plan of conversions.conversionPlans(model, entries)) {
    if (snapshot.existing.has(plan.path)) {
      kept.push(plan.path);
      continue;
    }
    const places = converted.get(plan.spoke.fileName);
    if (places !== undefined && places.length > 0) {
      notes.push(`${plan.crdName} ${plan.spoke.version}: no converter stub added, ${places[0]!.path} converts it already`);
      continue;
    }
    for (const file of scaffolding.conversionFiles(plan, info, crdFiles)) {
      if (snapshot.existing.has(file.path)) {
        kept.push(file.path);
        continue;
      }
      files.push(file);
      if (file.path === plan.path) added.push(file.path);
    }
  }
  return { files, added };
}

/** The converters of `modules` and the CRDs they convert: those whose generated modules a converting module refers to. */
function convertedCrds(
  modules: readonly detecting.UserModule[],
  entries: readonly scaffolding.IndexEntry[],
  model: modeling.GeneratorModel,
): scaffolding.Conversion {
  const registrations = detecting.conversionRegistrations(modules);
  const paths = new Set(registrations.map((registration) => registration.path));
  const { referenced } = detecting.scanReferences(
    modules.filter((module) => paths.has(module.path)),
    entries,
  );
  const names = new Set(entries.filter((entry) => referenced.has(entry.fileName)).map((entry) => entry.crdName));
  const crds = model.crds.filter((crd) => names.has(crd.crdName)).map((crd) => ({ crdName: crd.crdName, plural: crd.plural, group: crd.group }));
  return { registrations, crds };
}

/**
 * A CRD that serves versions with different schemas while its conversion strategy is `None`: the
 * API server serves an object in every served version by changing its apiVersion only, so fields
 * come back unconverted (and those the version lacks are pruned). A warning per such CRD, naming
 * the versions whose schema differs from the storage version's, and what to do.
 */
function unconvertedWarnings(model: modeling.GeneratorModel, conversion: scaffolding.Conversion): string[] {
  const warnings: string[] = [];
  for (const crd of model.crds) {
    if ((crd.conversionStrategy ?? 'None') !== 'None' || crd.versions.length < 2) continue;
    const hub = conversions.hubOf(crd) ?? crd.versions[0]!;
    const differing = crd.versions.filter((version) => version !== hub && JSON.stringify(version.schema) !== JSON.stringify(hub.schema));
    if (differing.length === 0) continue;
    const converted = conversion.crds.some((each) => each.crdName === crd.crdName);
    const fix = converted
      ? `apply ${scaffolding.CONVERSION_FILE} after the CRD, which points it at the operator's converters (or merge its spec.conversion into the CRD's file in crds/, which ends this warning)`
      : `register converters with on.convert (kopf-gen writes a stub per version in ${conversions.CONVERSIONS_DIR}/ when the storage version is served), or stop serving the older versions`;
    warnings.push(
      `${crd.crdName} serves ${differing.map((version) => version.version).join(', ')} with schemas that differ from ${hub.version}'s, ` +
        `but its conversion strategy is None: the API server would serve its objects in every version with only apiVersion changed, fields unconverted. To convert them, ${fix}.`,
    );
  }
  return warnings;
}

/**
 * The samples of `samples/` that name a version that is gone: a warning for each (stalesamples.ts),
 * and a fresh sample of the new version beside its file, unless there is one already. Returns the
 * fresh samples to write; adds the warnings to `warnings`.
 */
function staleSamples(
  snapshot: Snapshot,
  model: modeling.GeneratorModel,
  kinds: readonly scaffolding.KindPlan[],
  info: scaffolding.ProjectInfo,
  warnings: string[],
): scaffolding.PlannedFile[] {
  const stale = stalesamples.findStale(snapshot.sampleFiles, model);
  const files: scaffolding.PlannedFile[] = [];
  const planned = new Set<string>();
  for (const each of stale) {
    const severalKinds = new Set(stale.filter((other) => other.path === each.path).map((other) => other.crdName)).size > 1;
    const target = stalesamples.replacementPath(each, severalKinds);
    const kind = kinds.find((plan) => plan.crdName === each.crdName);
    if (kind !== undefined && !snapshot.existing.has(target) && !planned.has(target)) {
      files.push(scaffolding.replacementSample(kind, info, target, each.path));
      planned.add(target);
    }
    const fresh = snapshot.existing.has(target) || planned.has(target) ? { path: target, written: !snapshot.existing.has(target) } : undefined;
    warnings.push(stalesamples.describeStale(each, fresh));
  }
  return files;
}

/**
 * When the user-owned Deployment and the project's `"lease"` disagree (R-SEC-4): the RBAC grants
 * the Lease of kopf-gen.json only, so a `--lease` it does not name would be refused (403), and a
 * configured Lease without `--lease` is granted for nothing.
 */
function leaseWarnings(deploymentText: string | undefined, lease: string | undefined): string[] {
  if (deploymentText === undefined) return [];
  const used = servers.deploymentLease(deploymentText);
  if (used === undefined || used === (lease ?? null)) return [];
  if (used === null) {
    return [
      `kopf-gen.json names the Lease "${lease}", but ${scaffolding.DEPLOYMENT_FILE} does not pass --lease=${lease}: add it to the operator's args for leader election.`,
    ];
  }
  return [
    `${scaffolding.DEPLOYMENT_FILE} passes --lease=${used}, but deploy/rbac.yaml grants ${lease === undefined ? 'no Lease' : `only the Lease "${lease}"`}: ` +
      `set "lease": "${used}" in kopf-gen.json and run \`npm run generate\`, or the operator's Lease requests are refused (HTTP 403).`,
  ];
}

/**
 * When the user-owned Deployment and the project's `"shards"` disagree (R-SHARD-402): the RBAC
 * grants the replicas' Leases and the labelling of the served objects only while kopf-gen.json
 * names a ring, so a `--shards` without one is refused (403), and a ring without `--shards` in the
 * Deployment shards nothing. The rules do not depend on the ring's name.
 */
function shardWarnings(deploymentText: string | undefined, ring: string | undefined): string[] {
  if (deploymentText === undefined) return [];
  const used = servers.deploymentFlag(deploymentText, '--shards');
  if (used === undefined || used === (ring ?? null)) return [];
  if (used === null) {
    return [
      `kopf-gen.json names the ring "${ring}", but ${scaffolding.DEPLOYMENT_FILE} does not pass --shards=${ring}: add it to the operator's args (and raise replicas) to shard the objects across the replicas.`,
    ];
  }
  if (ring !== undefined) return []; // another ring's name: the rules do not depend on it
  return [
    `${scaffolding.DEPLOYMENT_FILE} passes --shards=${used}, but deploy/rbac.yaml grants nothing for sharding: ` +
      `set "shards": "${used}" in kopf-gen.json and run \`npm run generate\`, or the replicas' Lease requests are refused (HTTP 403).`,
  ];
}

/**
 * The status-pruning warnings (pruning.ts) for the kinds one of whose handlers in `modules`
 * returns a value: a module with such a handler counts for every kind whose descriptor it refers to.
 */
function pruningWarnings(model: modeling.GeneratorModel, entries: readonly scaffolding.IndexEntry[], modules: readonly detecting.UserModule[]): string[] {
  const handlers = detecting.resultHandlers(modules);
  if (handlers.length === 0) return [];
  const { referenced } = detecting.scanReferences(modules, entries);
  const returning = new Map<string, detecting.Place[]>();
  for (const entry of entries) {
    const paths = new Set((referenced.get(entry.fileName) ?? []).map((place) => place.path));
    const found = handlers.filter((handler) => paths.has(handler.path));
    if (found.length === 0) continue;
    const known = returning.get(entry.crdName) ?? [];
    returning.set(entry.crdName, [...known, ...found.filter((handler) => !known.some((each) => each.path === handler.path && each.line === handler.line))]);
  }
  return pruning.statusPruningWarnings(model, returning);
}

/**
 * What an index written before the manifest recorded it exported, read from its text (the
 * generated `export * from "./<module>.js";` and `export * as <Namespace> from …` lines) and the
 * manifest's versions (which name the modules: `<crd name>.<version>.ts`).
 */
function recordedIndex(indexText: string | undefined, manifest: fields.Manifest, model: modeling.GeneratorModel): Record<string, fields.IndexRecord> {
  const records: Record<string, fields.IndexRecord> = {};
  if (indexText === undefined) return records;
  const flat = new Set([...indexText.matchAll(/^export \* from "\.\/(.+)\.js";$/gm)].map((match) => match[1]!));
  for (const [, namespace, stem] of indexText.matchAll(/^export \* as ([A-Za-z_$][\w$]*) from "\.\/(.+)\.js";$/gm)) {
    const version = Object.values(manifest.versions).find((entry) => `${entry.crdName}.${entry.version}` === stem);
    if (version === undefined) continue;
    const descriptor = model.crds.find((crd) => crd.crdName === version.crdName)?.versions[0]?.names.descriptor ?? '';
    records[`${stem}.ts`] = { crdName: version.crdName, version: version.version, descriptor, namespace: namespace!, flat: flat.has(stem!) };
  }
  return records;
}

/**
 * The CRD a stale import belonged to: for a generated module, by the last generation's record or
 * by its name (`<plural>.<group>.<version>`); for an index name, the module that had it as its
 * namespace or its descriptor.
 */
function formerCrd(stale: detecting.StaleImport, previous: Readonly<Record<string, fields.IndexRecord>>, model: modeling.GeneratorModel): string | undefined {
  if (stale.name === undefined) {
    const recorded = previous[`${stale.target}.ts`]?.crdName;
    if (recorded !== undefined) return recorded;
    const matching = model.crds.filter((crd) => stale.target.startsWith(`${crd.crdName}.`)).map((crd) => crd.crdName);
    return matching.sort((a, b) => b.length - a.length)[0];
  }
  return Object.values(previous).find((record) => record.namespace === stale.name || (record.flat && record.descriptor === stale.name))?.crdName;
}

/** A warning about an import of what is no longer generated, naming the file, the line and what to import instead. */
function describeStale(stale: detecting.StaleImport, crdName: string | undefined, entries: readonly scaffolding.IndexEntry[]): string {
  const what =
    stale.name === undefined
      ? `imports ${JSON.stringify(stale.specifier)}, which is no longer generated`
      : `imports ${stale.name} from ${JSON.stringify(stale.specifier)}, which src/generated/index.ts no longer exports`;
  const now = entries.filter((entry) => entry.crdName === crdName);
  let hint = '';
  if (crdName !== undefined && now.length === 0) hint = `: ${crdName} is no longer among the CRDs in crds/`;
  else if (now.length > 0) {
    const modules = now.map((entry) => `src/generated/${entry.fileName}`).join(', ');
    const names = now.map((entry) => (entry.flat ? `${entry.descriptor} or ${entry.namespace}` : entry.namespace)).join(', ');
    hint = `: ${crdName} is now generated as ${modules} (index: ${names}); edit the import`;
  }
  return `${stale.path}:${stale.line}: ${what}${hint}`;
}
