// Type-level tests of `Exact<Expected, Actual>` (R-TYPES-101, R-TYPES-102): what a converter between
// two versions of a CRD may return. Converters are written as users write them (spreading the
// source object) against shapes the generator emits: the example's generated Sprocket modules, and
// copies of emitted declarations for nullable fields, int-or-string, maps, preserved unknown fields,
// embedded resources and empty objects. `// @ts-expect-error` lines prove what must not compile
// (they fail as unused if `Exact` lets a field through); the lines without it prove what must
// compile (they fail if `Exact` refuses too much). The compiler's own messages are checked too:
// they must name the path of the offending field. `tsc` checks this file in `npm test`; vitest runs
// it as well (the converters are never called).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as yaml from 'yaml';
import type * as V1 from '../../../fixtures/generated/sprockets.conversion.kopf-gen.dev.v1.js';
import type * as V2 from '../../../fixtures/generated/sprockets.conversion.kopf-gen.dev.v2.js';
import type { Exact, ObjectMeta } from '../../../runtime/index.js';
import * as support from '../../generator/support.js';

/**
 * The pinned shape of a converter to `To` (on.convert's `forward`/`backward`): it returns
 * `R & Exact<To, R>` for the `R` inferred from its body.
 */
function converter<From, To>() {
  return <R extends To>(convert: (object: From) => R & Exact<To, R>): ((object: From) => R) => convert;
}

const V1_API = 'conversion.kopf-gen.dev/v1';
const V2_API = 'conversion.kopf-gen.dev/v2';

/** Generated-like shapes (as the generator emits them for mappings.yaml and bundles.yaml). */
interface MeshSpecSelector {
  app?: string;
}
interface MeshSpecPorts {
  name: string;
  port: number;
  protocol: 'TCP' | 'UDP';
}
interface MeshSpecServers {
  url: string;
  weight: number;
}
interface MeshSpec {
  replicas: number;
  maxUnavailable?: number | string | null;
  selector: MeshSpecSelector | null;
  ports?: MeshSpecPorts[];
  servers?: { [key: string]: MeshSpecServers };
  labels?: { [key: string]: string };
  opaque?: { [key: string]: unknown };
  values?: unknown;
  empty?: { [key: string]: never };
  template?: { apiVersion: string; kind: string; metadata?: ObjectMeta } & { [key: string]: unknown };
}
interface Mesh {
  apiVersion: 'example.com/v2';
  kind: 'Mesh';
  metadata?: ObjectMeta;
  spec: MeshSpec;
  status?: { [key: string]: never };
}
/** The older version: the same fields, plus what v2 renamed (`ports[].portName`, `servers{}.address`). */
interface OldMesh {
  apiVersion: 'example.com/v1';
  kind: 'Mesh';
  metadata?: ObjectMeta;
  spec: Omit<MeshSpec, 'ports' | 'servers'> & {
    ports?: (MeshSpecPorts & { portName?: string })[];
    servers?: { [key: string]: MeshSpecServers & { address?: string } };
  };
  status?: { phase?: string };
}

const toMesh = converter<OldMesh, Mesh>();
const toV2 = converter<V1.Sprocket, V2.Sprocket>();
const toV1 = converter<V2.Sprocket, V1.Sprocket>();

describe('R-TYPES-101: a field the target version lacks is a compile error in the converter', () => {
  it('R-TYPES-101: the renamed field, spread along, is refused; moved to its new name, it compiles', () => {
    // @ts-expect-error `spec.size` is v1's name of `spec.replicas`: carried along by the spread
    toV2((object) => {
      const { image, ...spec } = object.spec;
      return { ...object, apiVersion: V2_API, spec: { ...spec, replicas: spec.size, image: { repository: image } } };
    });
    toV2((object) => {
      const { size, image, ...spec } = object.spec;
      return { ...object, apiVersion: V2_API, spec: { ...spec, replicas: size, image: { repository: image } } };
    });
  });

  it('R-TYPES-101: the field only the source version has is refused until it goes somewhere', () => {
    // @ts-expect-error `spec.paused` exists in v2 only: it must go somewhere (an annotation) or be dropped on purpose
    toV1((object) => {
      const { replicas, image, ...spec } = object.spec;
      return { ...object, apiVersion: V1_API, spec: { ...spec, size: replicas, image: image.repository } };
    });
    toV1((object) => {
      const { replicas, image, paused, ...spec } = object.spec;
      void paused;
      return { ...object, apiVersion: V1_API, spec: { ...spec, size: replicas, image: `${image.repository}:${image.tag}` } };
    });
  });

  it('R-TYPES-101: nested objects, optional source fields, list items and map values are checked', () => {
    // @ts-expect-error `spec.image.reference` is no field of v2's image
    toV2((object) => {
      const { size, image, ...spec } = object.spec;
      return { ...object, apiVersion: V2_API, spec: { ...spec, replicas: size, image: { repository: image, reference: image } } };
    });
    // @ts-expect-error `spec.ports[].portName` (optional in the source) is no field of the target's items
    toMesh((object) => {
      return { ...object, apiVersion: 'example.com/v2', status: {}, spec: { ...object.spec, servers: undefined } };
    });
    // @ts-expect-error `spec.servers{}.address` is no field of the target's map values
    toMesh((object) => {
      const ports = object.spec.ports?.map(({ portName, ...port }) => ({ ...port, name: portName ?? port.name }));
      return { ...object, apiVersion: 'example.com/v2', status: {}, spec: { ...object.spec, ports } };
    });
    toMesh((object) => {
      const ports = object.spec.ports?.map(({ portName, ...port }) => ({ ...port, name: portName ?? port.name }));
      const servers = Object.fromEntries(
        Object.entries(object.spec.servers ?? {}).map(([key, { address, ...server }]) => [key, { ...server, url: address ?? server.url }]),
      );
      return { ...object, apiVersion: 'example.com/v2', status: {}, spec: { ...object.spec, ports, servers } };
    });
  });

  it('R-TYPES-101: nullable objects, metadata and embedded resources are checked', () => {
    // @ts-expect-error `spec.selector.tier`: the object member of `Selector | null` has no such field
    toMesh((object) => {
      const selector = object.spec.selector === null ? null : { ...object.spec.selector, tier: 'web' };
      return { ...object, apiVersion: 'example.com/v2', status: {}, spec: { ...object.spec, ports: undefined, servers: undefined, selector } };
    });
    // @ts-expect-error `metadata.clusterName` is no field of ObjectMeta
    toMesh((object) => {
      return {
        ...object,
        apiVersion: 'example.com/v2',
        metadata: { ...object.metadata, clusterName: 'a' },
        status: {},
        spec: { ...object.spec, ports: undefined, servers: undefined },
      };
    });
    // @ts-expect-error `spec.template.metadata.clusterName`: an embedded resource's metadata is an ObjectMeta
    toMesh((object) => {
      const template = object.spec.template && { ...object.spec.template, metadata: { ...object.spec.template.metadata, clusterName: 'a' } };
      return { ...object, apiVersion: 'example.com/v2', status: {}, spec: { ...object.spec, ports: undefined, servers: undefined, template } };
    });
  });
});

describe('R-TYPES-102: what the target declares open or as a union accepts what it may hold', () => {
  it('R-TYPES-102: maps, preserved unknown fields, embedded resources, int-or-string and null pass', () => {
    toMesh((object) => ({
      ...object,
      apiVersion: 'example.com/v2',
      metadata: { ...object.metadata, annotations: { ...object.metadata?.annotations, 'example.com/v1-status': JSON.stringify(object.status) } },
      status: {},
      spec: {
        ...object.spec,
        ports: undefined,
        servers: undefined,
        maxUnavailable: object.spec.replicas > 2 ? '25%' : object.spec.replicas > 1 ? 1 : null,
        selector: null,
        labels: { ...object.spec.labels, 'app.kubernetes.io/version': 'v2' },
        opaque: { ...object.spec.opaque, anything: { deeply: ['nested', 1, null] } },
        values: { whatever: true },
        template: object.spec.template && { ...object.spec.template, spec: { containers: [] }, data: { a: 'b' } },
      },
    }));
  });

  it('R-TYPES-102: a union of object members (hand-written types) takes any one of them, not a mix', () => {
    type Source = { kind: 'a'; a: string } | { kind: 'b'; b: number };
    const toUnion = converter<{ source: Source }, { source: Source }>();
    toUnion((object) => ({ source: object.source.kind === 'a' ? { kind: 'a' as const, a: object.source.a } : { kind: 'b' as const, b: object.source.b } }));
    // @ts-expect-error `a` and `b` together match neither member exactly
    toUnion((object) => ({ source: { kind: 'a' as const, a: 'x', b: object.source.kind === 'b' ? object.source.b : 0 } }));
  });

  it('R-TYPES-102: Exact maps extra keys to never, deeply, and leaves declared and open ones alone', () => {
    expectTypeOf<Exact<V2.SprocketSpec, { replicas: number; size: number; image: { repository: string } }>>().toEqualTypeOf<{
      replicas: number;
      size: never;
      image: { repository: string };
    }>();
    expectTypeOf<Exact<{ items?: { a: string }[] | null }, { items: readonly { a: string; b: number }[] }>>().toEqualTypeOf<{
      items: readonly { a: string; b: never }[];
    }>();
    expectTypeOf<Exact<{ map: { [key: string]: { a: string } } }, { map: { x: { a: string; b: number } } }>>().toEqualTypeOf<{
      map: { x: { a: string; b: never } };
    }>();
    expectTypeOf<Exact<{ open?: unknown }, { open: { b: number } }>>().toEqualTypeOf<{ open: { b: number } }>();
    expectTypeOf<Exact<{ n?: number | string | null }, { n: string | null }>>().toEqualTypeOf<{ n: string | null }>();
    expectTypeOf<Exact<{ a: string }, { a: string; raw: any }>>().toEqualTypeOf<{ a: string; raw: never }>();
    expectTypeOf<Exact<{ a: string }, any>>().toBeAny();
  });
});

/** Runs the real compiler on one converter file beside the generated Sprocket modules. */
function diagnostics(converter: string): string[] {
  const generated = (version: string) => {
    const fileName = `sprockets.conversion.kopf-gen.dev.${version}.ts`;
    return { fileName, text: fs.readFileSync(path.join(support.REPO_ROOT, 'fixtures/generated', fileName), 'utf8') };
  };
  const text = [
    "import type { Exact } from 'kopf-gen/runtime';",
    "import type * as V1 from './sprockets.conversion.kopf-gen.dev.v1.js';",
    "import type * as V2 from './sprockets.conversion.kopf-gen.dev.v2.js';",
    'declare function convert<R1 extends V2.Sprocket, R2 extends V1.Sprocket>(converters: {',
    '  forward(object: V1.Sprocket): R1 & Exact<V2.Sprocket, R1>;',
    '  backward(object: V2.Sprocket): R2 & Exact<V1.Sprocket, R2>;',
    '}): void;',
    converter,
  ].join('\n');
  return support.typecheck([generated('v1'), generated('v2'), { fileName: 'converter.ts', text }]);
}

describe("R-TYPES-101: the compiler's message names the offending field's path", () => {
  it('R-TYPES-101: spec.size and spec.paused, under the strict flags users turn on', () => {
    const found = diagnostics(
      [
        'convert({',
        '  forward(object) {',
        '    const { image, ...spec } = object.spec;',
        `    return { ...object, apiVersion: '${V2_API}', spec: { ...spec, replicas: spec.size, image: { repository: image } } };`,
        '  },',
        '  backward(object) {',
        '    const { replicas, image, ...spec } = object.spec;',
        `    return { ...object, apiVersion: '${V1_API}', spec: { ...spec, size: replicas, image: image.repository } };`,
        '  },',
        '});',
      ].join('\n'),
    );
    expect(found).toEqual([
      expect.stringMatching(
        /^converter\.ts:9: [\s\S]*The types of 'spec\.size' are incompatible between these types\.\n\s*Type 'number' is not assignable to type 'never'/,
      ),
      expect.stringMatching(/^converter\.ts:13: [\s\S]*The types of 'spec\.paused' are incompatible between these types\./),
    ]);
  }, 60_000);

  it('R-TYPES-101: the same converters, with both fields handled, compile clean', () => {
    const found = diagnostics(
      [
        'convert({',
        '  forward(object) {',
        '    const { size, image, ...spec } = object.spec;',
        `    return { ...object, apiVersion: '${V2_API}', spec: { ...spec, replicas: size, image: { repository: image } } };`,
        '  },',
        '  backward(object) {',
        '    const { replicas, image, paused: _paused, ...spec } = object.spec;',
        `    return { ...object, apiVersion: '${V1_API}', spec: { ...spec, size: replicas, image: image.repository } };`,
        '  },',
        '});',
      ].join('\n'),
    );
    expect(found).toEqual([]);
  }, 60_000);
});

/**
 * A large real schema: the CronJob CRD (the built-in JobTemplateSpec inlined, as controller-gen
 * writes it), in a v1 and a v2 that renamed `spec.schedule` to `spec.cron`; both modules generated.
 */
function cronJobVersions(): { fileName: string; text: string }[] {
  const crd = yaml.parse(fs.readFileSync(path.join(support.REPO_ROOT, 'fixtures/crds/cronjobs.yaml'), 'utf8'));
  const v1 = crd.spec.versions[0];
  v1.schema.openAPIV3Schema.required = ['spec'];
  const v2 = structuredClone(v1);
  v1.storage = false;
  v2.name = 'v2';
  const properties = v2.schema.openAPIV3Schema.properties.spec.properties;
  properties.cron = properties.schedule;
  delete properties.schedule;
  v2.schema.openAPIV3Schema.properties.spec.required = ['cron', 'jobTemplate'];
  crd.spec.versions = [v1, v2];
  return support.generate([support.source([crd], 'crds/cronjobs.yaml')]).modules.map(({ fileName, text }) => ({ fileName, text }));
}

describe('R-TYPES-101: converters of a large real schema', () => {
  it('R-TYPES-101: type-check in one pass, the left-over field named, without excessive depth', () => {
    const modules = cronJobVersions();
    expect(modules.map((module) => module.text.length).every((length) => length > 400_000)).toBe(true);
    const [v1, v2] = modules.map((module) => `./${module.fileName.replace(/\.ts$/, '.js')}`);
    const text = [
      "import type { Exact } from 'kopf-gen/runtime';",
      `import type * as V1 from '${v1}';`,
      `import type * as V2 from '${v2}';`,
      'declare function convert<R1 extends V2.CronJob, R2 extends V1.CronJob>(converters: {',
      '  forward(object: V1.CronJob): R1 & Exact<V2.CronJob, R1>;',
      '  backward(object: V2.CronJob): R2 & Exact<V1.CronJob, R2>;',
      '}): void;',
      'convert({',
      '  forward(object) {',
      "    return { ...object, apiVersion: 'batch.tutorial.kopf-gen.dev/v2', spec: { ...object.spec, cron: object.spec.schedule } };",
      '  },',
      '  backward(object) {',
      '    const { cron, ...spec } = object.spec;',
      "    return { ...object, apiVersion: 'batch.tutorial.kopf-gen.dev/v1', spec: { ...spec, schedule: cron } };",
      '  },',
      '});',
    ].join('\n');
    const found = support.typecheck([...modules, { fileName: 'converter.ts', text }]);
    expect(found).toEqual([expect.stringMatching(/^converter\.ts:9: [\s\S]*The types of 'spec\.schedule' are incompatible between these types\./)]);
  }, 180_000);
});
