/**
 * Scaffolding: the files of a generated project, as texts, from an analysis of its CRDs.
 *
 * Three groups of files, with different owners:
 * - generated files (`src/generated/*`, `deploy/rbac.yaml`, `kopf-gen.json`, and — while the
 *   user's code registers admission handlers — `deploy/webhooks.yaml`): rewritten by every
 *   generation — `generatedFiles`;
 * - per-kind user files (`src/handlers/<kind>.ts`, `test/<kind>.test.ts`, `samples/<kind>.yaml`):
 *   written once, when a kind has no handlers yet — `kindFiles`; the sample file and the test hold
 *   the same sample object (samples.ts), rendered once as YAML and once as a typed literal;
 * - per-version converter stubs of CRDs serving several versions (`src/conversions/<kind>.<version>.ts`
 *   and `test/conversions/<kind>.<version>.test.ts`, conversions.ts): written once — `conversionFiles`;
 * - project files (`package.json`, `tsconfig.json`, `tsconfig.build.json`, `src/main.ts`,
 *   `deploy/deployment.yaml`, `deploy/peering.yaml`, `deploy/networkpolicy.yaml`, `Dockerfile`,
 *   `.dockerignore`, `README.md`, `.gitignore`): written
 *   by `init` only — `projectFiles`.
 * The decisions that templates cannot make (names, the preferred version of a kind, which index
 * exports are flat, sample objects, the operator's scope flags, its resources) are made here, in
 * `indexEntries`, `kindPlans`, `scopeArgs` and `OPERATOR_RESOURCES`, and about the operator's
 * endpoints and webhooks in servers.ts; rendering.ts only fills the templates in. Pure apart from
 * reading the templates.
 */
import * as accesses from './accesses.js';
import * as conversions from './conversions.js';
import * as detecting from './detecting.js';
import * as fields from './fields.js';
import type * as modeling from './modeling.js';
import * as naming from './naming.js';
import * as permissions from './permissions.js';
import type * as pipeline from './pipeline.js';
import * as projects from './projects.js';
import * as pruning from './pruning.js';
import * as reconcilestubs from './reconcilestubs.js';
import * as rendering from './rendering.js';
import * as samples from './samples.js';
import * as schemas from './schemas.js';
import * as yaml from 'yaml';
import * as servers from './servers.js';
import type * as types from './emitting/types.js';

/** What the templates need to know about the project itself. */
export interface ProjectInfo {
  readonly name: string;
  readonly generatorVersion: string;
  /** The `kopf-gen` dependency of the generated package.json (`file:…` or a version range). */
  readonly kopfGenDependency: string;
  /** The `@kopf-gen/generator` development dependency of the generated package.json (`file:…` or a version range). */
  readonly generatorDependency: string;
  /** Versions of the generated project's development dependencies. */
  readonly versions: { readonly typescript: string; readonly tsx: string; readonly vitest: string; readonly typesNode: string };
  /** The namespaces the operator serves (checked names); empty: all namespaces. */
  readonly namespaces: readonly string[];
  /** The Lease of leader election (`--lease`, a checked name); absent: none. */
  readonly lease?: string;
  /** The ring of sharding (`"shards"` in kopf-gen.json, `--shards` in the Deployment, a checked name); absent: none. */
  readonly shards?: string;
  /** Whether the handler stubs also register a validating handler (`kopf-gen init --webhooks`). */
  readonly webhookStubs?: boolean;
  /** The kind of handler stubs for kinds without handlers (`init --handlers`, `"handlers"` in kopf-gen.json); absent: cause handlers. */
  readonly handlers?: projects.HandlerStyle;
}

/** Where the generated webhook manifests go (while the user's code registers admission handlers). */
export const WEBHOOKS_FILE = 'deploy/webhooks.yaml';
/** The generated module that configures the webhook server (likewise). */
export const ADMISSION_MODULE = `${projects.GENERATED_DIR}/admission.ts`;
/** The generated patches of the CRDs that src/ converts (while it registers converters). */
export const CONVERSION_FILE = projects.CONVERSION_FILE;
/** The user-owned Deployment. */
export const DEPLOYMENT_FILE = 'deploy/deployment.yaml';

/** Kopf's peering CRDs and the operator's peering objects (written once; applied once per cluster). */
export const PEERING_FILE = 'deploy/peering.yaml';

/** Who may reach the operator's ports (written once). */
export const NETWORK_POLICY_FILE = 'deploy/networkpolicy.yaml';

/** An admission registration as the generated files list it: `src/handlers/widget.ts:12 on.validate`. */
export function describeRegistration(registration: detecting.AdmissionRegistration): string {
  return `${registration.path}:${registration.line} on.${registration.registration}`;
}

/** A CRD whose versions src/ converts (conversion.yaml patches it). */
export interface ConvertedCrd {
  readonly crdName: string;
  readonly plural: string;
  readonly group: string;
}

/** The converters src/ registers (`on.convert`), and the CRDs they convert. */
export interface Conversion {
  readonly registrations: readonly detecting.AdmissionRegistration[];
  readonly crds: readonly ConvertedCrd[];
}

/** The webhook path of a CRD's conversions, as the runtime serves it (`/convert/<plural>.<group>`). */
export function conversionPath(crd: ConvertedCrd): string {
  return `/convert/${crd.plural}.${crd.group}`;
}

/** What the Deployment and webhook templates use about the operator's servers. */
function serversContext(info: ProjectInfo, admission: readonly detecting.AdmissionRegistration[]): object {
  return {
    args: servers.deploymentArgs(scopeArgs(info.namespaces), info.lease),
    lease: info.lease,
    health: servers.HEALTH,
    metrics: servers.METRICS,
    webhooks: admission.length > 0,
    webhookServer: servers.WEBHOOKS,
    webhookNames: servers.webhookNames(kubeName(info.name)),
  };
}

/**
 * The container resources of the generated Deployment (deploy/deployment.yaml), in one place.
 * The memory request covers an operator that is ready with a few hundred objects (about 60 MB at
 * ready, growing with the objects it handles at once), and `basis` (rendered next to the values in
 * the manifest) says what the figures rest on; the limit leaves room for bursts and handlers' own
 * work; there is no CPU limit, so that bursts (a relist, many events at once) are not throttled.
 */
export const OPERATOR_RESOURCES = {
  memoryRequest: '128Mi',
  memoryLimit: '512Mi',
  cpuRequest: '50m',
  basis:
    'measured on 2026-11-24 (kopf-gen 0.2.0, npm run bench -- startup / operator): 59 MiB RSS when ready (66 MiB on 2026-11-29), 199 MB at peak while 1,000 objects were created at once',
} as const;

/**
 * The command-line flags of the operator's scope: `-A` (all namespaces), or `-n NS` for each
 * namespace the project was created for. The package.json scripts, the Dockerfile's CMD, the
 * Deployment's args and the generated tests all use them.
 */
export function scopeArgs(namespaces: readonly string[]): string[] {
  return namespaces.length === 0 ? ['-A'] : namespaces.flatMap((namespace) => ['-n', namespace]);
}

/** What every project template may use about the operator's scope. */
function scopeContext(info: ProjectInfo): { scopeArgs: string[]; scopeFlags: string; clusterwide: boolean; namespaces: readonly string[] } {
  const args = scopeArgs(info.namespaces);
  return { scopeArgs: args, scopeFlags: args.join(' '), clusterwide: info.namespaces.length === 0, namespaces: info.namespaces };
}

/** A file to write, relative to the project. */
export interface PlannedFile {
  readonly path: string;
  readonly text: string;
}

/** One generated module as the index re-exports it. */
export interface IndexEntry extends detecting.DescriptorExport {
  readonly crdName: string;
  readonly version: string;
  /** The natural names the module did not get because existing exports keep them. */
  readonly withheld?: fields.IndexWithheld;
}

/** The decisions about one CRD's user files. */
export interface KindPlan {
  readonly crdName: string;
  readonly kind: string;
  readonly group: string;
  readonly plural: string;
  /** The version the stubs register for: the storage version if served, else the first served. */
  readonly version: string;
  readonly apiVersion: string;
  readonly namespaced: boolean;
  /** The generated module of that version. */
  readonly fileName: string;
  /** Every generated module of the CRD (all served versions). */
  readonly fileNames: readonly string[];
  readonly descriptor: string;
  readonly bodyType: string;
  readonly specType: string;
  readonly statusType: string;
  readonly handlerPath: string;
  readonly testPath: string;
  readonly functionSuffix: string;
  readonly statusPruned: boolean;
  /** A scalar `spec` field for the commented `on.field` example, or null. */
  readonly fieldExample: string | null;
  /** A scalar `status` field for the commented `patch.status` example, or null. */
  readonly statusField: string | null;
  /** `<Kind>Input`: the type of an object as a user writes it (the generated test's sample has it). */
  readonly inputType: string;
  /** Where the kind's sample object goes (`samples/<kind>.yaml`). */
  readonly samplePath: string;
  /** The sample object, without a namespace (`kindFiles` adds the project's, if it names any). */
  readonly sampleObject: Readonly<Record<string, unknown>>;
  /** What the sample may not satisfy in the schema, one line per field (see samples.ts). */
  readonly sampleNotes: readonly string[];
  /** Where a reconcile stub reports its Deployment's readiness (reconcilestubs.ts). */
  readonly readiness: reconcilestubs.ReadinessTarget;
}

/** The name of every sample object (one per kind, so one name suffices). */
export const SAMPLE_NAME = 'example';

/**
 * Decides, for every generated module, its namespace name and whether the index exports it flat,
 * so that no generation renames an export user code may import. `previous` is what the last
 * generation's index exported (from the manifest, keyed by module file name):
 * - flat (top-level) names: the preferred version of each kind is exported flat unless one of its
 *   names is another module's. Kinds that were flat before are decided first, in model order, so
 *   a kind added later never takes a name away from them (nor does a version rename: the kind
 *   stays flat with its new preferred version); the others are flat only when their names clash
 *   with no one's.
 * - namespaces (`WidgetV1`): a module keeps the namespace it had; the others claim
 *   `<Kind><Version>`, and when that is taken, `<Kind><Version><Group>` (`WidgetV1AcmeIo`), then
 *   a number.
 * A module that did not get its natural names says so in `withheld` (for the change summary).
 */
export function indexEntries(
  model: modeling.GeneratorModel,
  modules: readonly types.EmittedModule[],
  previous: Readonly<Record<string, fields.IndexRecord>> = {},
): IndexEntry[] {
  const versions = model.crds.flatMap((crd) => crd.versions);
  const names = new Map(versions.map((version, index) => [version, detecting.exportedNames(modules[index]!.text)]));
  const records = Object.values(previous);
  const wasFlat = new Set(records.filter((record) => record.flat).map((record) => record.crdName));
  const preferred = model.crds.map((crd) => preferredVersion(crd)).filter((version) => version !== undefined);
  /** Top-level name → the CRD whose module exports it. */
  const holders = new Map<string, string>();
  const flat = new Set<modeling.VersionModel>();
  const withheldFlat = new Map<modeling.VersionModel, { names: string[]; holders: Set<string> }>();
  const keep = (version: modeling.VersionModel): void => {
    flat.add(version);
    for (const name of names.get(version)!) holders.set(name, version.crdName);
  };
  for (const version of preferred.filter((each) => wasFlat.has(each.crdName))) {
    const clashes = names.get(version)!.filter((name) => holders.has(name));
    if (clashes.length === 0) keep(version);
    else withheldFlat.set(version, { names: clashes, holders: new Set(clashes.map((name) => holders.get(name)!)) });
  }
  const newcomers = preferred.filter((each) => !wasFlat.has(each.crdName));
  const owners = new Map<string, modeling.VersionModel[]>();
  for (const version of newcomers) for (const name of names.get(version)!) owners.set(name, [...(owners.get(name) ?? []), version]);
  const decided = new Map(holders);
  for (const version of newcomers) {
    const clashes = names.get(version)!.filter((name) => decided.has(name) || owners.get(name)!.length > 1);
    if (clashes.length === 0) {
      keep(version);
      continue;
    }
    const others = clashes.flatMap((name) => [
      ...(decided.has(name) ? [decided.get(name)!] : []),
      ...owners
        .get(name)!
        .filter((other) => other !== version)
        .map((other) => other.crdName),
    ]);
    withheldFlat.set(version, { names: clashes, holders: new Set(others) });
  }
  const registry = new naming.NameRegistry(holders.keys());
  /** Namespace → the CRD whose module has it. */
  const namespaceHolders = new Map<string, string>();
  const namespaces = new Map<modeling.VersionModel, string>();
  for (const version of versions) {
    const record = records.find((each) => each.crdName === version.crdName && each.version === version.version);
    if (record === undefined || registry.has(record.namespace) || !/^[A-Za-z_$][\w$]*$/.test(record.namespace)) continue;
    namespaces.set(version, registry.claim(record.namespace));
    namespaceHolders.set(record.namespace, version.crdName);
  }
  const withheldNamespace = new Map<modeling.VersionModel, { name: string; holder: string }>();
  for (const version of versions) {
    if (namespaces.has(version)) continue;
    const natural = naming.identifier(`${version.names.body}${naming.pascal(version.version)}`);
    if (!registry.has(natural)) {
      namespaces.set(version, registry.claim(natural));
    } else {
      withheldNamespace.set(version, { name: natural, holder: namespaceHolders.get(natural) ?? holders.get(natural) ?? version.crdName });
      namespaces.set(version, registry.claim(naming.identifier(`${natural}${naming.pascal(version.group)}`)));
    }
    namespaceHolders.set(namespaces.get(version)!, version.crdName);
  }
  return versions.map((version, index) => {
    const namespace = withheldNamespace.get(version);
    const flatNames = withheldFlat.get(version);
    const withheld: fields.IndexWithheld | undefined =
      namespace === undefined && flatNames === undefined
        ? undefined
        : {
            ...(namespace ? { namespace: namespace.name } : {}),
            ...(flatNames ? { flat: [...flatNames.names].sort() } : {}),
            holders: [...new Set([...(namespace ? [namespace.holder] : []), ...(flatNames?.holders ?? [])])].sort(),
          };
    return {
      fileName: modules[index]!.fileName,
      descriptor: version.names.descriptor,
      flat: flat.has(version),
      namespace: namespaces.get(version)!,
      crdName: version.crdName,
      version: version.version,
      ...(withheld ? { withheld } : {}),
    };
  });
}

/** The version whose descriptor the stubs use. */
export function preferredVersion(crd: modeling.CrdModel): modeling.VersionModel | undefined {
  return crd.versions.find((version) => version.storage) ?? crd.versions[0];
}

/** Decides the user files of every CRD with a served version; `taken` are handler paths in use. */
export function kindPlans(model: modeling.GeneratorModel, modules: readonly types.EmittedModule[], taken: Iterable<string> = []): KindPlan[] {
  const fileOf = new Map<modeling.VersionModel, string>();
  model.crds.flatMap((crd) => crd.versions).forEach((version, index) => fileOf.set(version, modules[index]!.fileName));
  const used = new Set([...taken].map((name) => name.toLowerCase()));
  const plans: KindPlan[] = [];
  for (const crd of model.crds) {
    const version = preferredVersion(crd);
    if (!version) continue;
    const base = naming.words(crd.kind).join('-').toLowerCase() || 'kind';
    let stem = base;
    if (used.has(`${projects.HANDLERS_DIR}/${stem}.ts`)) stem = `${base}.${crd.group}`;
    for (let counter = 2; used.has(`${projects.HANDLERS_DIR}/${stem}.ts`); counter += 1) stem = `${base}.${crd.group}-${counter}`;
    used.add(`${projects.HANDLERS_DIR}/${stem}.ts`);
    const apiVersion = `${crd.group}/${version.version}`;
    const sample = samples.sampleResource(version.schema, { apiVersion, kind: crd.kind, name: SAMPLE_NAME });
    plans.push({
      crdName: crd.crdName,
      kind: crd.kind,
      group: crd.group,
      plural: crd.plural,
      version: version.version,
      apiVersion,
      namespaced: version.namespaced,
      fileName: fileOf.get(version)!,
      fileNames: crd.versions.map((each) => fileOf.get(each)!),
      descriptor: version.names.descriptor,
      bodyType: version.names.body,
      specType: version.names.spec,
      statusType: version.names.status,
      handlerPath: `${projects.HANDLERS_DIR}/${stem}.ts`,
      testPath: `${projects.TESTS_DIR}/${stem}.test.ts`,
      samplePath: `${projects.SAMPLES_DIR}/${stem}.yaml`,
      functionSuffix: version.names.body,
      statusPruned: !pruning.keepsStatusResults(version),
      fieldExample: scalarField(version.specSchema, 'spec'),
      statusField: scalarField(version.statusSchema, ''),
      inputType: version.names.input,
      sampleObject: sample.value,
      sampleNotes: sample.notes,
      readiness: reconcilestubs.readinessTarget(version, crd.group),
    });
  }
  return plans;
}

/** The first scalar property (with a plain name) of an object schema, as `prefix.name`. */
function scalarField(node: schemas.Schema | undefined, prefix: string): string | null {
  if (!node) return null;
  for (const [name, child] of schemas.propertiesOf(node)) {
    const type = schemas.typeOf(child);
    const scalar = type === 'string' || type === 'integer' || type === 'number' || type === 'boolean' || schemas.flag(child, schemas.INT_OR_STRING);
    if (scalar && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return prefix ? `${prefix}.${name}` : name;
  }
  return null;
}

/**
 * The files every generation rewrites. `handlerModules` are the project's handler module paths;
 * `used` what its code does with each kind (accesses.ts: the RBAC grants exactly that);
 * `admission` the admission handlers it registers (when there are any: the webhook manifests, the
 * module that serves them, and the RBAC to manage their configurations); `entries` how the index
 * exports each module (see `indexEntries`; the manifest records them for the next generation).
 */
export function generatedFiles(
  analysis: pipeline.Analysis,
  info: ProjectInfo,
  crdFiles: readonly string[],
  handlerModules: readonly string[],
  used: readonly accesses.Access[] = [],
  admission: readonly detecting.AdmissionRegistration[] = [],
  entries: readonly IndexEntry[] = indexEntries(analysis.model, analysis.modules),
  conversion: Conversion = { registrations: [], crds: [] },
  conversionModules: readonly string[] = [],
): PlannedFile[] {
  const files: PlannedFile[] = analysis.modules.map((module) => ({ path: `${projects.GENERATED_DIR}/${module.fileName}`, text: module.text }));
  const importPath = (fileName: string): string => `./${fileName.replace(/\.ts$/, '.js')}`;
  files.push({
    path: `${projects.GENERATED_DIR}/index.ts`,
    text: rendering.render('src/generated/index.ts', {
      name: info.name,
      generatorVersion: info.generatorVersion,
      modules: entries.map((entry) => ({ ...entry, importPath: importPath(entry.fileName) })),
    }),
  });
  const handlerImports = [...handlerModules].sort().map((file) => `../handlers/${file.slice(projects.HANDLERS_DIR.length + 1).replace(/\.ts$/, '.js')}`);
  const conversionImports = [...conversionModules]
    .sort()
    .map((file) => `../conversions/${file.slice(conversions.CONVERSIONS_DIR.length + 1).replace(/\.ts$/, '.js')}`);
  const hasAdmission = admission.length > 0;
  const hasConversion = conversion.registrations.length > 0;
  files.push({
    path: `${projects.GENERATED_DIR}/handlers.ts`,
    text: rendering.render('src/generated/handlers.ts', {
      generatorVersion: info.generatorVersion,
      handlerImports,
      conversionImports,
      webhooks: hasAdmission || hasConversion,
      empty: handlerImports.length + conversionImports.length === 0,
    }),
  });
  files.push({ path: projects.MANIFEST_FILE, text: fields.renderManifest(fields.buildManifest(analysis.model, info.generatorVersion, entries)) });
  const names = servers.webhookNames(kubeName(info.name));
  const rules = permissions.permissionsOf(analysis.model, used, hasAdmission ? names.managed : undefined, info.lease, info.shards);
  const hasClusterScoped =
    analysis.model.crds.some((crd) => crd.versions[0]?.namespaced === false) || accesses.builtinKinds(used).some((resource) => !resource.namespaced);
  files.push({
    path: 'deploy/rbac.yaml',
    text: rendering.render('deploy/rbac.yaml', {
      ...scopeContext(info),
      kubeName: kubeName(info.name),
      generatorVersion: info.generatorVersion,
      rules,
      hasClusterScoped,
      admission: hasAdmission,
      conversion: hasConversion,
      convertedCrds: conversion.crds.map((crd) => crd.crdName),
      metrics: servers.METRICS,
      lease: info.lease,
      shards: info.shards,
    }),
  });
  if (hasAdmission || hasConversion) {
    const context = {
      name: info.name,
      kubeName: kubeName(info.name),
      generatorVersion: info.generatorVersion,
      handlers: [...admission, ...conversion.registrations].map(describeRegistration),
      admission: hasAdmission,
      conversion: hasConversion,
      names,
      server: servers.WEBHOOKS,
    };
    files.push({ path: ADMISSION_MODULE, text: rendering.render('src/generated/admission.ts', context) });
    files.push({ path: WEBHOOKS_FILE, text: rendering.render('deploy/webhooks.yaml', context) });
  }
  if (hasConversion && conversion.crds.length > 0) {
    files.push({ path: CONVERSION_FILE, text: conversionPatches(info, conversion, names) });
    files.push({
      path: projects.DEVELOPMENT_RBAC_FILE,
      text: rendering.render('test/rbac-development.yaml', {
        kubeName: kubeName(info.name),
        generatorVersion: info.generatorVersion,
        convertedCrds: conversion.crds.map((crd) => crd.crdName),
      }),
    });
  }
  files.push({
    path: projects.CONFIG_FILE,
    text: rendering.render('kopf-gen.json', {
      name: info.name,
      generatorVersion: info.generatorVersion,
      crdFiles,
      namespaces: info.namespaces,
      lease: info.lease,
      shards: info.shards,
      handlers: info.handlers === 'reconcile' ? info.handlers : undefined,
    }),
  });
  return files;
}

/** deploy/conversion.yaml: a merge patch per converted CRD, pointing its spec.conversion at the webhook Service. */
function conversionPatches(info: ProjectInfo, conversion: Conversion, names: servers.WebhookNames): string {
  const crds = conversion.crds.map((crd) => {
    const patch = {
      metadata: { name: crd.crdName, annotations: { 'cert-manager.io/inject-ca-from': `${names.namespace}/${names.servingCertificate}` } },
      spec: {
        conversion: {
          strategy: 'Webhook',
          webhook: {
            conversionReviewVersions: ['v1'],
            clientConfig: { service: { namespace: names.namespace, name: names.service, path: conversionPath(crd), port: servers.WEBHOOKS.servicePort } },
          },
        },
      },
    };
    return { name: crd.crdName, path: conversionPath(crd), patchJson: JSON.stringify(patch) };
  });
  return rendering.render('deploy/conversion.yaml', {
    kubeName: kubeName(info.name),
    generatorVersion: info.generatorVersion,
    handlers: conversion.registrations.map(describeRegistration),
    crds,
    single: crds.length === 1,
    names,
    server: servers.WEBHOOKS,
  });
}

/**
 * The converter stub of one non-hub version and its test (conversions.ts): both written once. The
 * test round-trips each version's sample in-process, then end to end on the devcluster with the
 * operator running as its service account (`crdFiles` and the project's scope, as the kind tests).
 */
export function conversionFiles(plan: conversions.ConversionPlan, info: ProjectInfo, crdFiles: readonly string[]): PlannedFile[] {
  const body = (direction: conversions.Direction): string => direction.lines.join('\n    ');
  const helpers = [...plan.forward.helpers, ...plan.backward.helpers].map((lines) => lines.join('\n'));
  const refusal = (direction: conversions.Direction, object: Readonly<Record<string, unknown>>) => {
    const refused = conversions.refusals(direction, object);
    return {
      refused: refused.length > 0,
      refusedList: refused.join(', '),
      single: refused.length === 1,
      pattern: refused.length > 0 ? `${refused[0]!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is` : '',
    };
  };
  const test = (direction: conversions.Direction, sample: string, object: Readonly<Record<string, unknown>>, title: string) => ({
    title,
    // roundTrip takes an object of the conversion's source version; one of its target (the hub) says so.
    args: sample === 'hubSample' ? `${sample}, { from: 'to' }` : sample,
    ...refusal(direction, object),
  });
  const tests = [
    test(
      plan.forward,
      'spokeSample',
      plan.spoke.sample,
      `${plan.spoke.version} → ${plan.hub.version} → ${plan.spoke.version} keeps the ${plan.spoke.version} sample`,
    ),
    test(plan.backward, 'hubSample', plan.hub.sample, `${plan.hub.version} → ${plan.spoke.version} → ${plan.hub.version} keeps the ${plan.hub.version} sample`),
  ];
  // End to end: the spoke's sample is converted forward when the API server stores it (in the hub),
  // the hub's backward when it is read in the spoke; a refusal fails that request.
  const descriptor = (side: conversions.ConversionSide): string => `${side.namespace}.${side.descriptor}`;
  const sampleName = (side: conversions.ConversionSide): string => {
    const metadata = side.sample['metadata'];
    const name = schemas.isRecord(metadata) && typeof metadata['name'] === 'string' ? metadata['name'] : SAMPLE_NAME;
    return `${name}-${side.version}`.toLowerCase().slice(0, 63);
  };
  const endToEnd = [
    {
      title: `the ${plan.spoke.version} sample, created in ${plan.spoke.version}, reads in ${plan.hub.version} as the converter makes it`,
      sample: 'spokeSample',
      name: sampleName(plan.spoke),
      from: descriptor(plan.spoke),
      to: descriptor(plan.hub),
      direction: 'forward',
      onCreate: true,
      ...refusal(plan.forward, plan.spoke.sample),
    },
    {
      title: `the ${plan.hub.version} sample, created in ${plan.hub.version}, reads in ${plan.spoke.version} as the converter makes it`,
      sample: 'hubSample',
      name: sampleName(plan.hub),
      from: descriptor(plan.hub),
      to: descriptor(plan.spoke),
      direction: 'backward',
      onCreate: false,
      ...refusal(plan.backward, plan.hub.sample),
    },
  ];
  const context = {
    ...plan,
    ...scopeContext(info),
    helpers,
    forwardBody: body(plan.forward),
    backwardBody: body(plan.backward),
    moduleImport: plan.path.replace(/\.ts$/, '.js'),
    spokeLiteral: typescriptLiteral(plan.spoke.sample, 0),
    hubLiteral: typescriptLiteral(plan.hub.sample, 0),
    tests,
    endToEnd,
    crdFiles,
    conversionPath: conversionPath(plan),
    testNamespace: info.namespaces[0] ?? 'default',
    servedNamespaces: info.namespaces,
    kubeName: kubeName(info.name),
    tempPrefix: `${info.name}-test-`,
  };
  return [
    { path: plan.path, text: rendering.render('src/conversions/version.ts', context) },
    { path: plan.testPath, text: rendering.render('test/conversion.test.ts', context) },
  ];
}

/**
 * The sample object of a kind as the project writes it: in the first namespace the operator serves
 * when the project names namespaces (so that `kubectl apply -f samples/` puts it where the operator
 * looks); without one otherwise, so that kubectl puts it in the current namespace (`-n` to choose).
 */
export function projectSample(plan: KindPlan, info: ProjectInfo): Record<string, unknown> {
  const namespace = info.namespaces[0];
  if (!plan.namespaced || namespace === undefined) return { ...plan.sampleObject };
  const metadata = plan.sampleObject['metadata'];
  return { ...plan.sampleObject, metadata: { ...(schemas.isRecord(metadata) ? metadata : {}), namespace } };
}

/**
 * The handler stub, the test and the sample of one kind: cause handlers with a test of the create
 * handler, or (`handlers: 'reconcile'`) one reconcile handler that owns a Deployment, with a test
 * that plays the Deployment's controller.
 */
export function kindFiles(plan: KindPlan, info: ProjectInfo, crdFiles: readonly string[]): PlannedFile[] {
  const testNamespace = info.namespaces[0] ?? 'default';
  const sample = projectSample(plan, info);
  const context = {
    ...plan,
    ...scopeContext(info),
    testNamespace,
    projectName: info.name,
    annotationKey: `${plan.group}/created-by`,
    moduleImport: `../generated/${plan.fileName.replace(/\.ts$/, '.js')}`,
    testModuleImport: `../${projects.GENERATED_DIR}/${plan.fileName.replace(/\.ts$/, '.js')}`,
    crdFiles,
    tempPrefix: `${info.name}-test-`,
    kubeName: kubeName(info.name),
    servedNamespaces: info.namespaces,
    sampleName: SAMPLE_NAME,
    sampleLiteral: typescriptLiteral(sample, 0),
    sampleYaml: yaml.stringify(sample, { version: '1.1', lineWidth: 0 }).trimEnd(),
    testFile: plan.testPath.slice(projects.TESTS_DIR.length + 1),
    sampleFile: plan.samplePath,
    currentNamespace: plan.namespaced && info.namespaces.length === 0,
    webhooks: info.webhookStubs === true,
    // Handler ids name the webhook entries (`<id>.<managed name>`), which must be lower-case DNS names.
    validateId: `validate-${naming.words(plan.kind).join('-').toLowerCase() || 'kind'}`,
    // A cluster-scoped parent's Deployment goes into the first namespace the operator serves.
    childNamespace: plan.namespaced ? null : testNamespace,
  };
  const reconcile = info.handlers === 'reconcile';
  return [
    { path: plan.handlerPath, text: rendering.render(reconcile ? 'src/handlers/reconcile.ts' : 'src/handlers/kind.ts', context) },
    { path: plan.testPath, text: rendering.render(reconcile ? 'test/reconcile.test.ts' : 'test/kind.test.ts', context) },
    { path: plan.samplePath, text: rendering.render('samples/kind.yaml', context) },
  ];
}

/**
 * A fresh sample of a kind's preferred version at `samplePath`, beside a sample file of the user's
 * (`replaces`) whose version is gone (stalesamples.ts).
 */
export function replacementSample(plan: KindPlan, info: ProjectInfo, samplePath: string, replaces: string): PlannedFile {
  const sample = projectSample(plan, info);
  const context = {
    ...plan,
    sampleYaml: yaml.stringify(sample, { version: '1.1', lineWidth: 0 }).trimEnd(),
    sampleFile: samplePath,
    replaces,
    currentNamespace: plan.namespaced && info.namespaces.length === 0,
  };
  return { path: samplePath, text: rendering.render('samples/kind.yaml', context) };
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * A JSON value as a TypeScript expression, indented for a module: keys unquoted where they are
 * identifiers, `__proto__` computed (so that it stays an own property), strings as JSON.
 */
export function typescriptLiteral(value: unknown, depth: number): string {
  const indent = '  '.repeat(depth + 1);
  const closing = '  '.repeat(depth);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every((item) => item === null || typeof item !== 'object')) return `[${value.map((item) => JSON.stringify(item)).join(', ')}]`;
    return `[\n${value.map((item) => `${indent}${typescriptLiteral(item, depth + 1)},`).join('\n')}\n${closing}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return '{}';
    const key = (name: string): string => (name === '__proto__' ? `[${JSON.stringify(name)}]` : IDENTIFIER.test(name) ? name : JSON.stringify(name));
    return `{\n${entries.map(([name, item]) => `${indent}${key(name)}: ${typescriptLiteral(item, depth + 1)},`).join('\n')}\n${closing}}`;
  }
  return JSON.stringify(value);
}

/**
 * The files `init` writes once besides the generated and per-kind ones; `admission` are the
 * admission handlers the project starts with (from `--webhooks` stubs): the Deployment then mounts
 * the webhooks' certificate and exposes their port; `warnings` (status pruning) go into the README.
 */
export function projectFiles(
  info: ProjectInfo,
  plans: readonly KindPlan[],
  admission: readonly detecting.AdmissionRegistration[] = [],
  warnings: readonly string[] = [],
): PlannedFile[] {
  const context = {
    ...info,
    ...scopeContext(info),
    ...serversContext(info, admission),
    kubeName: kubeName(info.name),
    projectVersion: PROJECT_VERSION,
    kinds: plans,
    warnings,
    resources: OPERATOR_RESOURCES,
    reconcile: info.handlers === 'reconcile',
  };
  return [
    { path: 'package.json', text: rendering.render('package.json', context) },
    { path: 'tsconfig.json', text: rendering.render('tsconfig.json', context) },
    { path: 'tsconfig.build.json', text: rendering.render('tsconfig.build.json', context) },
    { path: '.gitignore', text: rendering.render('gitignore', context) },
    { path: 'Dockerfile', text: rendering.render('Dockerfile', context) },
    { path: '.dockerignore', text: rendering.render('dockerignore', context) },
    { path: 'README.md', text: rendering.render('README.md', context) },
    { path: 'src/main.ts', text: rendering.render('src/main.ts', context) },
    { path: DEPLOYMENT_FILE, text: rendering.render('deploy/deployment.yaml', context) },
    { path: PEERING_FILE, text: rendering.render('deploy/peering.yaml', context) },
    { path: NETWORK_POLICY_FILE, text: rendering.render('deploy/networkpolicy.yaml', context) },
  ];
}

/**
 * The version of a new project's package.json, which its image is also tagged with (the
 * Deployment's `image:` and the README's `docker build -t`), rather than a floating `latest`.
 */
export const PROJECT_VERSION = '0.1.0';

/** A Kubernetes object name (DNS label) for the project: service account, roles, namespace. */
export function kubeName(name: string): string {
  const cleaned = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return cleaned === '' ? 'operator' : cleaned;
}
