/**
 * Decoding protobuf request bodies (D-AUTH-11): the body kubectl 1.32 posts for `auth can-i create
 * pods`, recorded on the wire, and hand-encoded messages for each field kind.
 */
import { describe, expect, it } from 'vitest';
import * as messages from '../../../devcluster/auth/reviewmessages.js';
import * as protobuf from '../../../devcluster/server/protobuf.js';

/** What kubectl 1.32.5 sends for `kubectl auth can-i create pods` (every byte below 0x80). */
const KUBECTL_SSAR =
  'k8s\u0000\n2\n\u0017authorization.k8s.io/v1\u0012\u0017SelfSubjectAccessReview\u0012?\n\u0010\n\u0000\u0012\u0000\u001a\u0000"\u0000*\u00002\u00008\u0000B\u0000' +
  '\u0012!\n\u001f\n\u0007default\u0012\u0006create\u001a\u0000"\u0000*\u0004pods2\u0000:\u0000\u001a\b\b\u0000\u0012\u0000\u001a\u0000 \u0000\u001a\u0000"\u0000';

// A minimal encoder for the tests' own messages.
const varint = (n: number | bigint): Buffer => {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v ? byte | 0x80 : byte);
  } while (v);
  return Buffer.from(out);
};
const key = (field: number, wire: number): Buffer => varint((field << 3) | wire);
const bytes = (field: number, value: Buffer | string): Buffer => {
  const b = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return Buffer.concat([key(field, 2), varint(b.length), b]);
};
const num = (field: number, value: number | bigint): Buffer => Buffer.concat([key(field, 0), varint(value)]);
const msg = (...parts: Buffer[]): Buffer => Buffer.concat(parts);
const envelope = (apiVersion: string, kind: string, raw: Buffer): Buffer =>
  Buffer.concat([Buffer.from('k8s\0', 'latin1'), bytes(1, msg(bytes(1, apiVersion), bytes(2, kind))), bytes(2, raw), bytes(3, ''), bytes(4, '')]);

describe('decodeObject', () => {
  it("D-AUTH-11 decodes kubectl's SelfSubjectAccessReview, leaving out empty values as Go's JSON does", () => {
    expect(protobuf.decodeObject(Buffer.from(KUBECTL_SSAR, 'latin1'), messages.SELF_SUBJECT_ACCESS_REVIEW)).toEqual({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      metadata: { creationTimestamp: null },
      spec: { resourceAttributes: { namespace: 'default', verb: 'create', resource: 'pods' } },
      status: {},
    });
  });

  it('D-AUTH-11 repeated fields, maps of wrapped string lists, booleans, times and integers', () => {
    const extraEntry = (k: string, ...items: string[]): Buffer => bytes(5, msg(bytes(1, k), bytes(2, msg(...items.map((i) => bytes(1, i))))));
    const raw = msg(
      bytes(1, msg(bytes(3, 'team'), num(7, 3), bytes(8, msg(num(1, 1741064767), num(2, 5))), bytes(11, msg(bytes(1, 'app'), bytes(2, 'x'))))),
      bytes(2, msg(bytes(3, 'alice'), bytes(4, 'devs'), bytes(4, 'ops'), extraEntry('scope', 'a', 'b'), extraEntry('empty'))),
      bytes(3, msg(num(1, 1), num(4, 0))),
    );
    expect(protobuf.decodeObject(envelope('authorization.k8s.io/v1', 'SubjectAccessReview', raw), messages.SUBJECT_ACCESS_REVIEW)).toEqual({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      metadata: { namespace: 'team', generation: 3, creationTimestamp: '2025-03-04T05:06:07Z', labels: { app: 'x' } },
      spec: { user: 'alice', groups: ['devs', 'ops'], extra: { scope: ['a', 'b'], empty: [] } },
      status: { allowed: true },
    });
  });

  it('D-AUTH-11 fields the schema does not name are skipped, whatever their wire type', () => {
    const fixed64 = Buffer.concat([key(20, 1), Buffer.alloc(8, 0xff)]);
    const fixed32 = Buffer.concat([key(21, 5), Buffer.alloc(4, 0xff)]);
    const raw = msg(num(19, 2n ** 63n), fixed64, bytes(22, 'ignored'), fixed32, bytes(2, msg(bytes(1, 'secret-token'), bytes(2, 'aud'))));
    expect(protobuf.decodeObject(envelope('authentication.k8s.io/v1', 'TokenReview', raw), messages.TOKEN_REVIEW)).toEqual({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: 'secret-token', audiences: ['aud'] },
    });
  });

  it('D-AUTH-11 bytes that are not a Kubernetes protobuf body are a 400', () => {
    const bad = (body: Buffer): unknown => {
      try {
        protobuf.decodeObject(body, messages.TOKEN_REVIEW);
      } catch (err) {
        return err;
      }
      throw new Error('decoded');
    };
    expect(bad(Buffer.from('{"kind":"TokenReview"}'))).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: expect.stringMatching(/k8s protobuf prefix/),
    });
    expect(bad(Buffer.from(KUBECTL_SSAR, 'latin1').subarray(0, 40))).toMatchObject({ code: 400, message: expect.stringMatching(/truncated/) });
    expect(bad(envelope('v', 'K', Buffer.concat([key(2, 3)])))).toMatchObject({ code: 400, message: expect.stringMatching(/wire type 3/) });
  });
});
