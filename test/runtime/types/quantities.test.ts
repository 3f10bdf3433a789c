// Type-level tests of the built-in descriptors' input types (R-TYPES-302): quantities may be written
// as numbers (the API server accepts a JSON number for a quantity), and nothing else is widened —
// same-named members of other shapes and plain strings stay as `kubernetes-types` declares them.
import { describe, expectTypeOf, it } from 'vitest';
import type { BuiltinInput, InputTypeOf, Job, Pod, WithNumericQuantities } from '../../../runtime/index.js';
import type { builtins } from '../../../runtime/index.js';
import type * as coreV1 from 'kubernetes-types/core/v1.js';

type Container = NonNullable<NonNullable<BuiltinInput<Pod>['spec']>['containers']>[number];

describe('R-TYPES-302: quantities in the input types of built-in kinds', () => {
  it('R-TYPES-302: the descriptors of builtins take BuiltinInput', () => {
    expectTypeOf<InputTypeOf<typeof builtins.Jobs>>().toEqualTypeOf<BuiltinInput<Job>>();
  });

  it('R-TYPES-302: requests, limits, divisor and sizeLimit accept numbers', () => {
    expectTypeOf<NonNullable<NonNullable<Container['resources']>['limits']>>().toEqualTypeOf<{ [key: string]: string | number }>();
    expectTypeOf<NonNullable<NonNullable<Container['resources']>['requests']>>().toEqualTypeOf<{ [key: string]: string | number }>();
    type Divisor = NonNullable<NonNullable<NonNullable<NonNullable<Container['env']>[number]['valueFrom']>['resourceFieldRef']>['divisor']>;
    expectTypeOf<Divisor>().toEqualTypeOf<string | number>();
    type Volume = NonNullable<NonNullable<BuiltinInput<Pod>['spec']>['volumes']>[number];
    expectTypeOf<NonNullable<NonNullable<Volume['emptyDir']>['sizeLimit']>>().toEqualTypeOf<string | number>();
    const job: BuiltinInput<Job> = {
      metadata: { name: 'j' },
      spec: { template: { spec: { containers: [{ name: 'c', resources: { limits: { cpu: 1, memory: '1Gi' } } }] } } },
    };
    expectTypeOf(job).not.toBeAny();
  });

  it('R-TYPES-302: other strings and same-named members of other shapes are unchanged', () => {
    expectTypeOf<NonNullable<Container['env']>[number]['value']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Container['name']>().toEqualTypeOf<string>();
    expectTypeOf<WithNumericQuantities<coreV1.LimitRangeSpec>['limits'][number]['type']>().toEqualTypeOf<string>();
    // @ts-expect-error: a container's name is no quantity
    const wrong: Container = { name: 1 };
    expectTypeOf(wrong).not.toBeAny();
  });
});
