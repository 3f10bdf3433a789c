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
import * as detecting from './detecting.js';
import * as fields from './fields.js';
import * as inputs from './inputs.js';
import * as origins from './origins.js';
import type * as loading from './loading.js';
import * as pipeline from './pipeline.js';
import * as projects from './projects.js';
import * as scaffolding from './scaffolding.js';
import * as servers from './servers.js';
import * as writing from './writing.js';

export { GeneratorError } from './errors.js';
export type { GeneratorErrorCode, SourceLocation } from './errors.js';
export { ProjectError } from './projects.js';
export type { ProjectErrorCode, ProjectConfig } from './projects.js';
export type { CrdSource } from './inputs.js';
export type { ChangeSummary, FieldChange } from './fields.js';
export { renderSummary } from './fields.js';

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
  /** Where relative CRD paths are read from (default: the working directory). */
  readonly cwd?: string;
  /**
   * The handler stubs also register a validating admission handler per kind, so the project
   * starts with its webhook manifests, the module that serves them, and a Deployment that mounts
   * their certificate.
   */
  readonly webhooks?: boolean;
}

export interface GenerateOptions {
  /** The project directory (with kopf-gen.json). */
  readonly project: string;
}

export interface AddOptions {
  readonly project: string;
  /** The CRDs to add (files or texts). */
  readonly crds: readonly inputs.CrdSource[];
  readonly cwd?: string;
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
   * The built-in resources the handlers watch, which deploy/rbac.yaml now covers, as
   * `plural` (core group) or `plural.group`, e.g. `configmaps`, `deployments.apps`.
   */
  readonly builtins: readonly string[];
  /**
   * The admission handlers the code registers, as `src/handlers/widget.ts:12 on.validate`; when
   * there are any, deploy/webhooks.yaml and src/generated/admission.ts serve them.
   */
  readonly admission: readonly string[];
  /** Generated files that no longer apply and were deleted (deploy/webhooks.yaml without admission handlers). */
  readonly removed: readonly string[];
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
  dependencies: { kopfGen?: string | undefined; generator?: string | undefined } = {},
  webhookStubs = false,
): scaffolding.ProjectInfo {
  return {
    name,
    generatorVersion: GENERATOR_VERSION,
    namespaces,
    webhookStubs,
    kopfGenDependency: dependencies.kopfGen ?? kopfGenDependency(),
    generatorDependency: dependencies.generator ?? generatorDependency(),
    versions: PROJECT_TOOL_VERSIONS,
  };
}

/**
 * Creates a project from CRDs.
 *
 * @throws GeneratorError for unusable CRDs; ProjectError `invalid-namespace`, `output-not-empty`
 *   (without `force`), `missing-input`, `no-input`, `duplicate-crd`. Nothing is written when it throws.
 */
export async function init(options: InitOptions): Promise<GenerationReport> {
  const namespaces = projects.checkNamespaces(options.namespaces ?? []);
  const root = path.resolve(options.out);
  if (projects.isNonDirectory(root)) throw new projects.ProjectError('output-not-empty', `${options.out} exists and is not a directory`);
  if (!options.force && projects.isNonEmptyDirectory(root)) {
    throw new projects.ProjectError('output-not-empty', `${options.out} is not empty; choose another --out or pass --force to write into it`);
  }
  const sources = inputs.readSources(options.crds, options.cwd);
  const given = pipeline.check(sources);
  const copies = inputs
    .crdFiles(sources, given.loaded, given.notes)
    .map((file) => ({ copy: { path: `${projects.CRDS_DIR}/${file.fileName}`, text: file.text }, source: file.source, documentIndices: file.documentIndices }));
  const crdSources = copies.map((entry) => entry.copy);
  const analysis = pipeline.analyseChecked(crdSources, pipeline.recheck(copies, given));
  const info = projectInfo(
    projects.packageName(options.name ?? path.basename(root)),
    namespaces,
    { kopfGen: options.kopfGenDependency, generator: options.generatorDependency },
    options.webhooks === true,
  );
  const snapshot: Snapshot = {
    root,
    crdSources,
    userModules: [],
    existing: new Set(),
    manifestText: undefined,
    deploymentText: undefined,
    webhooksFile: false,
  };
  const planned = plan(snapshot, analysis, info);
  const files = [
    ...crdSources.map((source) => ({ path: source.path, text: source.text })),
    ...planned.files,
    ...scaffolding.projectFiles(analysis, info, planned.kinds, planned.admission),
  ];
  const written = writing.applyPlan({ root, files, replaceDirs: [projects.GENERATED_DIR] });
  return {
    project: root,
    written,
    stubsAdded: planned.stubsAdded,
    crdsAdded: crdSources.map((source) => source.path),
    summary: planned.summary,
    notes: [...given.notes, ...planned.notes],
    warnings: [...analysis.warnings, ...planned.warnings],
    builtins: planned.builtins,
    admission: planned.admission.map(scaffolding.describeRegistration),
    removed: [],
  };
}

/**
 * Regenerates a project from its kopf-gen.json and crds/: rewrites src/generated/ and
 * deploy/rbac.yaml (with rules for the built-in resources the code in src/ watches, bound in the
 * namespaces kopf-gen.json names), writes deploy/webhooks.yaml while the code registers admission
 * handlers (and deletes it when none is left), adds handler stubs (and tests) for kinds that have
 * no handlers, never modifies user code, and reports what changed since the last generation —
 * with a warning when deploy/deployment.yaml lacks what serving webhooks needs.
 *
 * @throws ProjectError `not-a-project`, `invalid-project`; GeneratorError for unusable CRDs.
 */
export async function generate(options: GenerateOptions): Promise<GenerationReport> {
  const { snapshot, config } = readProject(path.resolve(options.project));
  const analysis = pipeline.analyse(snapshot.crdSources);
  const info = projectInfo(config.name, config.namespaces);
  const planned = plan(snapshot, analysis, info);
  const written = writing.applyPlan({ root: snapshot.root, files: planned.files, replaceDirs: [projects.GENERATED_DIR], removeFiles: planned.removed });
  return {
    project: snapshot.root,
    written,
    stubsAdded: planned.stubsAdded,
    crdsAdded: [],
    summary: planned.summary,
    notes: [...analysis.notes, ...planned.notes],
    warnings: [...analysis.warnings, ...planned.warnings],
    builtins: planned.builtins,
    admission: planned.admission.map(scaffolding.describeRegistration),
    removed: planned.removed,
  };
}

/**
 * Adds CRDs to a project (copies them into crds/), then generates.
 *
 * @throws ProjectError `not-a-project`, `missing-input`, `duplicate-crd` (a CRD the project has);
 *   GeneratorError for unusable CRDs. Nothing is written when it throws.
 */
export async function add(options: AddOptions): Promise<GenerationReport> {
  const { snapshot, config } = readProject(path.resolve(options.project));
  const sources = inputs.readSources(options.crds, options.cwd);
  const given = pipeline.check(sources);
  const present = pipeline.check(snapshot.crdSources);
  pipeline.checkDuplicates(given.loaded, new Map(present.loaded.map((crd) => [pipeline.crdNameOf(crd), `${crd.file}, document ${crd.documentIndex}`])));
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
  const planned = plan(next, analysis, projectInfo(config.name, config.namespaces));
  const files = [...added.map((source) => ({ path: source.path, text: source.text })), ...planned.files];
  const written = writing.applyPlan({ root: snapshot.root, files, replaceDirs: [projects.GENERATED_DIR], removeFiles: planned.removed });
  return {
    project: snapshot.root,
    written,
    stubsAdded: planned.stubsAdded,
    crdsAdded: added.map((source) => source.path),
    summary: planned.summary,
    notes: [...given.notes, ...planned.notes],
    warnings: [...analysis.warnings, ...planned.warnings],
    builtins: planned.builtins,
    admission: planned.admission.map(scaffolding.describeRegistration),
    removed: planned.removed,
  };
}

/** What the planner knows about a project on disk. */
interface Snapshot {
  readonly root: string;
  /** The CRD files, with project-relative paths (`crds/x.yaml`). */
  readonly crdSources: readonly loading.SourceText[];
  /** The modules of src/ outside src/generated/ (handlers, main.ts, the user's own): where registrations live. */
  readonly userModules: readonly detecting.UserModule[];
  /** Project-relative paths of existing files in src/handlers/, test/ and samples/. */
  readonly existing: ReadonlySet<string>;
  readonly manifestText: string | undefined;
  /** The user's deploy/deployment.yaml, if there is one. */
  readonly deploymentText: string | undefined;
  /** Whether deploy/webhooks.yaml exists. */
  readonly webhooksFile: boolean;
}

function readProject(root: string): { snapshot: Snapshot; config: projects.ProjectConfig } {
  const config = projects.readConfig(root);
  const crdsDir = path.join(root, projects.CRDS_DIR);
  const crdNames = fs.existsSync(crdsDir)
    ? fs
        .readdirSync(crdsDir)
        .filter((name) => inputs.CRD_FILE_PATTERN.test(name))
        .sort()
    : [];
  if (crdNames.length === 0) throw new projects.ProjectError('invalid-project', `${path.join(root, projects.CRDS_DIR)}: no CRD files (*.yaml, *.yml, *.json)`);
  const crdSources = crdNames.map((name) => ({ path: `${projects.CRDS_DIR}/${name}`, text: fs.readFileSync(path.join(crdsDir, name), 'utf8') }));
  const existing = new Set([...listFiles(root, projects.HANDLERS_DIR), ...listFiles(root, projects.TESTS_DIR), ...listFiles(root, projects.SAMPLES_DIR)]);
  const userPaths = listFiles(root, 'src').filter((file) => !file.startsWith(`${projects.GENERATED_DIR}/`) && isModule(file));
  const userModules = userPaths.map((file) => ({ path: file, text: fs.readFileSync(path.join(root, file), 'utf8') }));
  const manifestPath = path.join(root, projects.MANIFEST_FILE);
  const manifestText = fs.existsSync(manifestPath) ? fs.readFileSync(manifestPath, 'utf8') : undefined;
  const deploymentPath = path.join(root, scaffolding.DEPLOYMENT_FILE);
  const deploymentText = fs.existsSync(deploymentPath) ? fs.readFileSync(deploymentPath, 'utf8') : undefined;
  const webhooksFile = fs.existsSync(path.join(root, scaffolding.WEBHOOKS_FILE));
  return { snapshot: { root, crdSources, userModules, existing, manifestText, deploymentText, webhooksFile }, config };
}

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
  /** Generated files to delete. */
  readonly removed: string[];
  readonly warnings: string[];
}

/** Plans the generated files and the stubs of kinds without handlers (pure apart from templates). */
function plan(snapshot: Snapshot, analysis: pipeline.Analysis, info: scaffolding.ProjectInfo): Planned {
  const entries = scaffolding.indexEntries(analysis.model, analysis.modules);
  const referenced = detecting.referencedModules(snapshot.userModules, entries);
  const handlerPaths = [...snapshot.existing].filter((file) => file.startsWith(`${projects.HANDLERS_DIR}/`));
  const kinds = scaffolding.kindPlans(analysis.model, analysis.modules, handlerPaths);
  const crdFiles = snapshot.crdSources.map((source) => source.path).sort();
  const files: scaffolding.PlannedFile[] = [];
  const stubsAdded: string[] = [];
  const notes: string[] = [];
  for (const kind of kinds) {
    const covered = kind.fileNames.filter((fileName) => referenced.has(fileName));
    if (covered.length > 0) {
      if (!covered.includes(kind.fileName)) notes.push(`${kind.crdName}: handlers use ${covered.join(', ')}, not the preferred version ${kind.version}`);
      continue;
    }
    for (const file of scaffolding.kindFiles(kind, info, crdFiles)) {
      if (snapshot.existing.has(file.path)) continue;
      files.push(file);
      if (file.path === kind.handlerPath) stubsAdded.push(file.path);
      if (file.path === kind.samplePath) notes.push(...kind.sampleNotes.map((note) => `${kind.samplePath}: ${note}`));
    }
  }
  const handlerModules = [...new Set([...handlerPaths.filter(isModule), ...stubsAdded])];
  const watchedBuiltins = detecting.builtinReferences(snapshot.userModules);
  const stubs = files.filter((file) => stubsAdded.includes(file.path));
  const admission = detecting.admissionRegistrations([...snapshot.userModules, ...stubs]);
  files.push(...scaffolding.generatedFiles(analysis, info, crdFiles, handlerModules, watchedBuiltins, admission));
  const manifest = fields.buildManifest(analysis.model, info.generatorVersion);
  const summary = fields.compare(fields.parseManifest(snapshot.manifestText), manifest);
  const builtins = watchedBuiltins.map((resource) => (resource.group === '' ? resource.plural : `${resource.plural}.${resource.group}`));
  const removed = admission.length === 0 && snapshot.webhooksFile ? [scaffolding.WEBHOOKS_FILE] : [];
  const warnings: string[] = [];
  if (admission.length > 0 && snapshot.deploymentText !== undefined) {
    const missing = servers.checkDeployment(snapshot.deploymentText, servers.webhookNames(scaffolding.kubeName(info.name)));
    if (missing.length > 0) {
      warnings.push(
        `${scaffolding.DEPLOYMENT_FILE} cannot serve the admission webhooks in the cluster: it lacks ${missing.join('; ')}. ` +
          'kopf-gen never rewrites it: add them as the README\'s "Admission webhooks" section shows, then apply deploy/webhooks.yaml and the Deployment.',
      );
    }
  }
  return { files, kinds, stubsAdded, summary, notes, builtins, admission, removed, warnings };
}
