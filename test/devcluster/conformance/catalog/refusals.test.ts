/**
 * Conformance checklist C-143 (devcluster reference section 13, "Built-ins"), generated from the
 * catalog: every creatable built-in kind refuses a body with a value of the wrong JSON type with
 * upstream's decoder message naming the field (400, D-BI-20), and a body without a member its
 * schema requires with 422 naming that member (D-BI-21) — and stores nothing either time. The
 * refused bodies are the kind's sample with one change (`test/support/builtins/refusals.ts`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entries } from '../../../../devcluster/upstream/catalog.js';
import { missingRequired, wrongType } from '../../../support/builtins/refusals.js';
import { isCreateOnly, offers, sampleName, sampleObject } from '../../../support/builtins/samples.js';
import { isReview } from '../../../support/builtins/samples.js';
import { collectionUrl, objectUrl, titleOf } from '../../../support/builtins/urls.js';
import { startHarness, type Harness, type Json } from '../harness.js';

const CREATABLE = entries().filter((e) => offers(e, 'create'));

describe('C-143 every built-in kind refuses what its schema does not allow, and stores nothing', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ widgets: false });
  });
  afterAll(async () => {
    await h?.stop();
  });

  /** Nothing of the kind named `name` exists (create-only kinds store nothing anyway). */
  const expectNothingStored = async (e: (typeof CREATABLE)[number], name: string): Promise<void> => {
    if (isCreateOnly(e)) return;
    expect((await h.get(objectUrl(e, name))).status, `${name} must not be stored`).toBe(404);
  };

  it('every creatable kind has a scalar to get wrong', () => {
    // Only kinds whose schema has no scalar member at all could be left out; 1.32 has one such kind.
    const without = CREATABLE.filter((e) => wrongType(e, sampleObject(e, 'probe')) === undefined).map(titleOf);
    expect(without).toEqual(['authentication.k8s.io/v1 selfsubjectreviews']);
  });

  // Reviews and bindings are answered, not stored: their missing members are refused by their own
  // checks with upstream's codes (a TokenReview without a token 400, a Binding without a target
  // 500 — D-AUTH-11..15, D-BI-17), tested below rather than as schema rules.
  const ownChecks = (e: (typeof CREATABLE)[number]): boolean => isReview(e) || e.resource === 'bindings';
  const cases = CREATABLE.filter((e) => {
    const sample = sampleObject(e, 'probe');
    return wrongType(e, sample) !== undefined || (!ownChecks(e) && missingRequired(e, sample) !== undefined);
  });

  it.each([
    ['authentication.k8s.io/v1 tokenreviews', 400, 'token is required for TokenReview in authentication'],
    ['authorization.k8s.io/v1 selfsubjectrulesreviews', 400, 'no namespace on request'],
    ['v1 bindings', 500, 'target.name: Required value'],
  ])('D-AUTH-14 D-BI-17 %s without its required members is refused with %i, as upstream', async (title, code, message) => {
    const e = CREATABLE.find((x) => titleOf(x) === title)!;
    const sample = sampleObject(e, sampleName(e, 'bare'));
    const bare = { apiVersion: sample['apiVersion'], kind: sample['kind'], metadata: sample['metadata'] };
    const r = await h.post(collectionUrl(e), e.resource === 'bindings' ? { ...bare, target: {} } : bare);
    expect(r.status, r.text).toBe(code);
    expect(r.json['message']).toBe(message);
  });

  describe.each(cases.map((e) => [titleOf(e), e] as const))('%s', (_, e) => {
    const sample = sampleObject(e, sampleName(e, 'refused'));
    const name = sample['metadata']['name'] as string;
    const wrong = wrongType(e, sample);
    const missing = ownChecks(e) ? undefined : missingRequired(e, sample);

    if (wrong) {
      it(`D-BI-20 a value of the wrong type at ${wrong.field} is 400 with the decoder's message`, async () => {
        const r = await h.post(collectionUrl(e), wrong.body);
        expect(r.status, r.text).toBe(400);
        expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 });
        expect(r.json['message']).toBe(wrong.message);
        await expectNothingStored(e, name);
      });
    }

    if (missing) {
      it(`D-BI-21 without the required ${missing.field} it is 422 naming the field`, async () => {
        const r = await h.post(collectionUrl(e), missing.body);
        expect(r.status, r.text).toBe(422);
        expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422, details: { kind: e.kind } });
        const fields = (r.json['details']['causes'] as Json[]).map((c) => c['field'] as string);
        // The kind's own validation may name what is missing inside the member (`spec.group` for `spec`).
        expect(
          fields.some((f) => f === missing.field || f.startsWith(`${missing.field}.`) || f.startsWith(`${missing.field}[`)),
          fields.join(', '),
        ).toBe(true);
        expect(r.json['message']).toContain(missing.field);
        await expectNothingStored(e, name);
      });
    }
  });
});
