/**
 * kopf-gen/runtime — the public face of the operator framework.
 *
 * Flat named exports; types are exported with `export type` separately from values.
 * Renamed from Kopf: the filter combinators `not_`/`all_`/`any_`/`none_` are `notFn`/`allFn`/`anyFn`/
 * `noneFn` (R-API-1); `Memo` is the container class, while handlers see `HandlerMemo` (typed by
 * augmenting `OperatorMemo`).
 */

// Typed resource descriptors.
export { resource, isDescriptor } from './cogs/structs/resources.js';
export type {
  ObjectMeta,
  OwnerReference,
  ManagedFieldsEntry,
  KubernetesObject,
  ResourceInfo,
  ResourceDescriptor,
  BodyOf,
  ViewOf,
  NamespaceOf,
  ObjectMetaInput,
  InputOf,
  InputTypeOf,
  ApplyOf,
  DeepPartial,
  MergePatch,
  NameOrGenerateName,
} from './cogs/structs/resources.js';
// What a converter between two versions returns: no field the target version lacks (on.convert).
export type { Exact } from './cogs/structs/exactness.js';

// The typed client: handlers get the operator's as `client`; scripts `connect()` for their own.
export { KubeClient } from './cogs/client/clients.js';
export type {
  SelectorSpec,
  CallOptions,
  AddressOptions,
  WriteOptions,
  ListOptions,
  ObjectList,
  JsonPatchOperation,
  PatchOptions,
  ReplaceOptions,
  ApplyOptions,
  DeleteOptions as ClientDeleteOptions,
  WatchOptions as ClientWatchOptions,
  WatchEvent,
  MergePatchOf,
} from './cogs/client/clients.js';
export { connect } from './kits/connecting.js';
export type { ConnectOptions } from './kits/connecting.js';
export type { ConnectionOptions } from './cogs/client/connections.js';
// A client-node `KubeConfig` as a connection (structurally typed: nothing of client-node is loaded).
// `kubeConfig()`, a client-node `KubeConfig` with the operator's live credentials, is the entry
// point `kopf-gen/client-node`, so that client-node's declarations reach only the projects using it.
export type { ClientNodeKubeConfig } from './cogs/client/clientnodeconfigs.js';
// The API's errors, by HTTP status, with its `Status` payload.
export {
  ApiError,
  ApiClientError,
  ApiServerError,
  ApiUnauthorizedError,
  ApiForbiddenError,
  ApiNotFoundError,
  ApiConflictError,
  ApiGoneError,
  ApiUnprocessableError,
  ApiTooManyRequestsError,
  ConnectionError,
  RequestTimeoutError,
  WatchingError,
  InvalidConnectionInfoError,
  ClientUsageError,
  ConnectionOptionsError,
} from './cogs/client/errors.js';
export type { ApiErrorCode, StatusPayload, StatusDetails, StatusCause, FailedRequest, RequestTarget } from './cogs/client/errors.js';

// Structs handlers see.
export { Patch } from './cogs/structs/patches.js';
export type {
  PatchOf,
  PatchInput,
  PatchViewOf,
  PatchWithView,
  SectionsOf,
  ObjectMetaPatchView,
  ReadonlyDeep,
} from './cogs/structs/patches.js';
export type { Diff, DiffItem, DiffOperation } from './cogs/structs/diffs.js';
export type { RawBody, RawEvent, RawEventType } from './cogs/structs/bodies.js';
export type { Resource } from './cogs/structs/references.js';
export type { Logger, LogLevel } from './cogs/structs/loggers.js';
export type { Clock } from './cogs/aio/clocks.js';
export { OperatorSettings, LeaderElectionSettings } from './cogs/configs/settings.js';
export { SettingsError } from './cogs/configs/errors.js';

// Registration.
export { on, daemon, timer, index } from './on.js';
export type {
  On,
  ChangingRegistrar,
  FieldRegistrar,
  ResourceRegistrar,
  IndexRegistrar,
  ActivityRegistrar,
  BodyOfRef,
  ViewOfRef,
  NamespaceOfRef,
  ScopedFn,
  ValueOf,
  CommonOptions,
  RetryOptions,
  FilterArgs,
  FilterOptions,
  FieldValueOptions,
  ChangeFilterOptions,
  CreateOptions,
  UpdateOptions,
  DeleteOptions,
  ResumeOptions,
  FieldOptions,
  WatchingOptions,
  DaemonOptions,
  TimerOptions,
  IndexingOptions,
  WebhookOptions,
  ActivityOptions,
  ReconcileRegistrar,
  ReconcileOptions,
  ReconcileArgsOf,
  ReconcileFnOf,
  OwnedOf,
  WatchEntry,
  ConvertRegistrar,
  ConvertOptions,
  Conversion,
} from './on.js';
export type { ConversionContext } from './core/intents/callbacks.js';
export { builtins } from './core/intents/builtins.js';
export type {
  JsonOf,
  BuiltinBody,
  BuiltinInput,
  WithNumericQuantities,
  Pod,
  ConfigMap,
  Secret,
  Service,
  Namespace,
  Node,
  Event,
  ServiceAccount,
  Endpoints,
  PersistentVolumeClaim,
  PersistentVolume,
  Deployment,
  StatefulSet,
  DaemonSet,
  ReplicaSet,
  Job,
  CronJob,
  Ingress,
  Lease,
  Role,
  RoleBinding,
  ClusterRole,
  ClusterRoleBinding,
  CustomResourceDefinition,
  ValidatingWebhookConfiguration,
  MutatingWebhookConfiguration,
} from './core/intents/builtins.js';

// Markers, filters, selectors.
export { PRESENT, ABSENT, notFn, allFn, anyFn, noneFn } from './core/intents/filters.js';
export type { MetaFilter, MetaFilters, ValueFilter, WhenFilter } from './core/intents/filters.js';
export { EVERYTHING, Selector } from './core/intents/selectors.js';
export type { ResourceRef, ResourceSelectorObject, ResourcePredicate } from './core/intents/selectors.js';
export { COPY, Memo } from './core/intents/memos.js';

// Registries, causes, handlers.
export { OperatorRegistry, getDefaultRegistry, setDefaultRegistry } from './core/intents/registry.js';
export { DuplicateHandlerIdError } from './core/intents/errors.js';
export { Reason } from './core/intents/causes.js';
export { DaemonStoppingReason } from './core/intents/stoppers.js';
export type { DaemonStopped } from './core/intents/stoppers.js';
export type {
  Handler,
  ResourceHandler,
  ChangingHandler,
  WatchingHandler,
  DaemonHandler,
  TimerHandler,
  IndexingHandler,
  WebhookHandler,
  ActivityHandler,
  ReconcileHandler,
  ErrorsModeName,
} from './core/intents/handlers.js';

// Handler signatures.
export type {
  OperatorMemo,
  OperatorIndices,
  HandlerMemo,
  ChangeReason,
  ActivityName,
  WebhookOperation,
  UserInfo,
  SpecOf,
  StatusOf,
  EssenceOf,
  FieldPathOf,
  PathValue,
  FieldRef,
  UntypedBody,
  RetryArgs,
  ResourceArgs,
  Scoped,
  ChangingArgs,
  WatchingArgs,
  DaemonArgs,
  TimerArgs,
  IndexingArgs,
  WebhookArgs,
  ActivityArgs,
  ChangingFn,
  WatchingFn,
  DaemonFn,
  TimerFn,
  IndexingFn,
  WebhookFn,
  ActivityFn,
  IndexOf,
  IndexOfResult,
  ReconcileArgs,
  ReconcileFn,
  ReconcileResult,
  ObjectRef,
} from './core/intents/callbacks.js';
export type { Index, Store } from './core/intents/indices.js';
export { IndexKeyError } from './core/engines/errors.js';

// Handler errors and their treatment.
export {
  KopfError,
  TemporaryError,
  PermanentError,
  HandlerTimeoutError,
  HandlerRetriesError,
  AdmissionError,
  ErrorsMode,
} from './core/actions/errors.js';

// Lifecycles: `lifecycles.asap`, `allAtOnce`, `oneByOne`, `randomized`, `shuffled`.
export * as lifecycles from './core/actions/lifecycles.js';
export { getDefaultLifecycle, setDefaultLifecycle } from './core/actions/lifecycles.js';
export type { Lifecycle, LifecycleContext } from './core/actions/lifecycles.js';

// Logging (the CLI's logging flags, also for embedded operators).
export { configure } from './core/actions/logging.js';
export type { ConfigureOptions, LogFormat } from './core/actions/logging.js';

// K8s-events about objects.
export { event, info, warn, exception } from './core/engines/posting.js';
export type { EventTargets } from './core/engines/posting.js';

// Sub-handlers, from inside change handlers.
export { subhandler, register, execute } from './core/reactor/subhandling.js';
export type {
  SubhandlerOptions,
  FieldSubhandlerOptions,
  RegisterOptions,
  ExecuteOptions,
  SubhandlerFn,
} from './core/reactor/subhandling.js';
// The typed forms handlers get in their arguments (`({ subhandler }) => …`).
export type { Subhandler, Register, Execute, SubhandlerRegistry } from './core/intents/callbacks.js';

// Running operators: embedded (`operator`), owning the process (`run`), or in two halves.
export { operator, run, spawnTasks, runTasks, HUNG_TASK_TIMEOUT } from './core/reactor/running.js';
export { OperatorScopeError, OperatorModeError, PeeringOptionsError } from './core/reactor/errors.js';
export type { OperatorOptions, OperatorTask, OperatorTasks, Watcher } from './core/reactor/running.js';
export type { StopFlag, ReadyFlag } from './core/reactor/running.js';
export { ActivityError } from './core/engines/errors.js';
// The liveness and readiness endpoints (`livenessEndpoint`, `--liveness`): their errors and what `onServing` gets.
export { EndpointUrlError, EndpointBindError, EndpointConflictError, EndpointOptionsError, EndpointCertificateError } from './core/engines/errors.js';
export type { ServedEndpoint } from './core/engines/endpoints.js';

// Admission webhooks: the server contract (for `settings.admission.server` and servers of your own),
// and the error of an admission set-up that cannot work. The request function servers call is
// `WebhookRequestFn` here (Kopf: `WebhookFn`; `WebhookFn` is the type of admission handlers).
export { WebhookRequestError } from './cogs/structs/errors.js';
export type { WebhookRequestProblem } from './cogs/structs/errors.js';
export type {
  WebhookFn as WebhookRequestFn,
  WebhookRequestContext,
  WebhookClientConfig,
  WebhookServiceReference,
  WebhookServerEnvironment,
  WebhookServerFn,
  WebhookServerObject,
  WebhookServerLike,
  AdmissionRequest,
  AdmissionResponse,
  AdmissionReviewResponse,
  ConversionRequest,
  ConversionResponse,
  ConversionResult,
  ConversionReviewResponse,
  GroupVersionResource,
  GroupVersionKind,
} from './cogs/structs/webhooks.js';
export { AdmissionSetupError, ConversionError } from './core/engines/errors.js';
export type { AdmissionSetupProblem } from './core/engines/errors.js';
export { Vault } from './cogs/client/credentials.js';
export type { ConnectionInfo } from './cogs/client/credentials.js';
export { ExecPluginTimeoutError, LoginError } from './cogs/client/errors.js';
export { loginWithKubeconfig, loginWithServiceAccount } from './cogs/client/logins.js';

// The command line's `run` (the `kopf-gen` binary dispatches to it).
export { main, isEntryPoint, runCommand, parseRunArgs, touchCommand } from './kits/launching/commands.js';
export { EntryPointError, UsageError } from './kits/launching/errors.js';
export type { RunCommandOptions, RunArgs, CommandOutput, TouchCommandOptions } from './kits/launching/commands.js';

// Admission webhook servers and tunnels, for `settings.admission.server`.
export {
  WebhookServer,
  WebhookK3dServer,
  WebhookMinikubeServer,
  WebhookDockerDesktopServer,
  WebhookAutoServer,
  WebhookNgrokTunnel,
  WebhookAutoTunnel,
  WebhookOptionsError,
  WebhookCertificateError,
  WebhookListenError,
  MissingDependencyError,
  WEBHOOK_BODY_LIMIT,
  WEBHOOK_DEPTH_LIMIT,
  WEBHOOK_ITEM_LIMIT,
} from './kits/webhooks/index.js';
export type {
  WebhookServerOptions,
  WebhookServiceOptions,
  WebhookVerifyMode,
  ClusterFlavour,
  WebhookNgrokTunnelOptions,
  WebhookAutoTunnelOptions,
  NgrokLoader,
  NgrokModule,
  NgrokListener,
  NgrokForwardConfig,
} from './kits/webhooks/index.js';

// Hierarchies: owner references, labels, names and namespaces of children (default owner: the handler's object).
export {
  adopt,
  appendOwnerReference,
  removeOwnerReference,
  label,
  harmonizeNaming,
  adjustNamespace,
  buildObjectReference,
  buildOwnerReference,
  HierarchyError,
} from './kits/hierarchies.js';
export type {
  OwnerLike,
  Objects,
  ObjectReference,
  HierarchyProblem,
  OwnerReferenceOptions,
  LabelOptions,
  NamingOptions,
  NamespaceOptions,
  AdoptOptions,
} from './kits/hierarchies.js';

// Testing: run an operator inside a test (the emulator comes from `kopf-gen/testing`).
export { KopfRunner } from './kits/launching/runner.js';
export { RunnerTimeoutError } from './kits/launching/errors.js';
export type { KopfRunnerOptions } from './kits/launching/runner.js';

/** Progress and diff-base storages (R-STORAGE-1/3/13): set them in `settings.persistence`. */
export {
  AnnotationsProgressStorage,
  StatusProgressStorage,
  MultiProgressStorage,
  SmartProgressStorage,
} from './cogs/configs/progress.js';
export type { ProgressStorage, ProgressRecord } from './cogs/configs/progress.js';
export { AnnotationsDiffBaseStorage, StatusDiffBaseStorage, MultiDiffBaseStorage } from './cogs/configs/diffbase.js';
export type { DiffBaseStorage } from './cogs/configs/diffbase.js';
