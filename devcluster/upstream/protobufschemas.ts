/**
 * The Kubernetes API's protobuf schemas, for reading protobuf request bodies (D-WIRE-25).
 *
 * The data, `proto/kubernetes.json`, is derived from the published `generated.proto` files and
 * the Go struct tags of kubernetes/api and kubernetes/apimachinery (see `proto/README.md`). It is
 * read only when the first protobuf body arrives, never at start: the protobuf library and the
 * message types together take a noticeable fraction of a second to load, and most clients never
 * send protobuf. The data file is read by itself first (a few milliseconds), so that asking which
 * API versions have schemas does not load the library.
 */
import * as fs from 'node:fs';
import * as url from 'node:url';
import type * as protobuf from 'protobufjs/light.js';

/** The derived data: see scripts/derive-protobuf-schema.mjs for how each part is made. */
interface Data {
  /** apiVersion (`v1`, `apps/v1`) → the proto package of its kinds. */
  groups: Record<string, string>;
  /** Messages that wrap a Go named slice: JSON writes their `items` as a bare list. */
  slices: string[];
  /** Message → field → Go JSON tag, `*` first for a pointer; fields with the default tag are absent. */
  go: Record<string, Record<string, string>>;
  /** protobufjs's JSON descriptor of the messages. */
  schema: protobuf.INamespace;
}

/** The package of the kinds every API version also serves (`DeleteOptions` of `apps/v1`, of `v1`, …). */
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

export interface Schemas {
  /** The message of `kind` in `apiVersion` (or of apimachinery's kinds, in any), or undefined. */
  kindType(apiVersion: string, kind: string): protobuf.Type | undefined;
  /** `runtime.Unknown`, the envelope of every protobuf body. */
  readonly envelope: protobuf.Type;
  /** The field's Go JSON tag (`*` first for a pointer), or undefined for `<field name>,omitempty`. */
  goTag(type: protobuf.Type, field: string): string | undefined;
  /** Whether the message wraps a Go named slice. */
  isSlice(type: protobuf.Type): boolean;
}

let data: Data | undefined;
let loading: Promise<Schemas> | undefined;

/** Whether protobuf bodies of `apiVersion`'s kinds can be read (reads the data, not the library). */
export function hasApiVersion(apiVersion: string): boolean {
  return Object.hasOwn(readData().groups, apiVersion);
}

/** The schemas, loaded on the first call; later calls share the same promise. */
export function load(): Promise<Schemas> {
  loading ??= build().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

async function build(): Promise<Schemas> {
  const d = readData();
  const pb = (await import('protobufjs/light.js')).default;
  const root = pb.Root.fromJSON(d.schema);
  const slices = new Set(d.slices);
  const lookup = (name: string): protobuf.Type | undefined => {
    const found = root.lookup(name);
    return found instanceof pb.Type ? found : undefined;
  };
  return {
    envelope: root.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown'),
    kindType(apiVersion, kind) {
      if (!/^[A-Z]\w*$/.test(kind)) return undefined;
      const pkg = d.groups[apiVersion];
      return (pkg === undefined ? undefined : lookup(`${pkg}.${kind}`)) ?? lookup(`${META}.${kind}`);
    },
    goTag: (type, field) => d.go[type.fullName.slice(1)]?.[field],
    isSlice: (type) => slices.has(type.fullName.slice(1)),
  };
}

function readData(): Data {
  data ??= JSON.parse(fs.readFileSync(dataFile(), 'utf8')) as Data;
  return data;
}

/**
 * Where the data is: beside this module when it runs from source, and under the package's
 * `devcluster/` folder when it runs compiled from `dist/devcluster/upstream/`.
 */
function dataFile(): string {
  const candidates = ['./proto/kubernetes.json', '../../../devcluster/upstream/proto/kubernetes.json'].map((p) =>
    url.fileURLToPath(new URL(p, import.meta.url)),
  );
  return candidates.find((file) => fs.existsSync(file)) ?? candidates[0]!;
}
