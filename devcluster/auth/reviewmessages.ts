/**
 * The protobuf messages of the review kinds, kept as data: what `server/protobuf.ts` needs to read
 * the reviews that kubectl's typed clients post in protobuf (`kubectl auth can-i`, `can-i --list`,
 * `whoami`, D-AUTH-11). Field numbers and names are those of Kubernetes' published `.proto` files
 * (`k8s.io/api` authorization/v1 and authentication/v1, `k8s.io/apimachinery` meta/v1; Apache
 * License 2.0, © The Kubernetes Authors). Fields a review never needs (selectors of resource
 * attributes, owner references, managed fields) are left out and skipped when present.
 */
import type * as protobuf from '../server/protobuf.js';

const str = (name: string): protobuf.FieldSpec => ({ name, type: 'string' });
const strs = (name: string): protobuf.FieldSpec => ({ name, type: 'string', repeated: true });

/** `metav1.ObjectMeta`, the members a review could carry (a review must leave them empty). */
const OBJECT_META: protobuf.MessageSchema = {
  fields: {
    1: str('name'),
    2: str('generateName'),
    3: str('namespace'),
    5: str('uid'),
    6: str('resourceVersion'),
    7: { name: 'generation', type: 'int' },
    8: { name: 'creationTimestamp', type: 'time' },
    9: { name: 'deletionTimestamp', type: 'time' },
    10: { name: 'deletionGracePeriodSeconds', type: 'int' },
    11: { name: 'labels', type: 'string', map: true },
    12: { name: 'annotations', type: 'string', map: true },
    14: strs('finalizers'),
  },
};

/** `ExtraValue` of both groups: a list of strings in JSON. */
const EXTRA_VALUE: protobuf.MessageSchema = { fields: { 1: strs('items') }, unwrap: 1 };

const RESOURCE_ATTRIBUTES: protobuf.MessageSchema = {
  fields: { 1: str('namespace'), 2: str('verb'), 3: str('group'), 4: str('version'), 5: str('resource'), 6: str('subresource'), 7: str('name') },
};

const NON_RESOURCE_ATTRIBUTES: protobuf.MessageSchema = { fields: { 1: str('path'), 2: str('verb') } };

const ACCESS_REVIEW_STATUS: protobuf.MessageSchema = {
  fields: { 1: { name: 'allowed', type: 'bool' }, 4: { name: 'denied', type: 'bool' }, 2: str('reason'), 3: str('evaluationError') },
};

const SUBJECT_ACCESS_REVIEW_SPEC: protobuf.MessageSchema = {
  fields: {
    1: { name: 'resourceAttributes', type: RESOURCE_ATTRIBUTES },
    2: { name: 'nonResourceAttributes', type: NON_RESOURCE_ATTRIBUTES },
    3: str('user'),
    4: strs('groups'),
    5: { name: 'extra', type: EXTRA_VALUE, map: true },
    6: str('uid'),
  },
};

/** `SubjectAccessReview` and `LocalSubjectAccessReview` (the same message). */
export const SUBJECT_ACCESS_REVIEW: protobuf.MessageSchema = {
  fields: {
    1: { name: 'metadata', type: OBJECT_META },
    2: { name: 'spec', type: SUBJECT_ACCESS_REVIEW_SPEC },
    3: { name: 'status', type: ACCESS_REVIEW_STATUS },
  },
};

export const SELF_SUBJECT_ACCESS_REVIEW: protobuf.MessageSchema = {
  fields: {
    1: { name: 'metadata', type: OBJECT_META },
    2: {
      name: 'spec',
      type: { fields: { 1: { name: 'resourceAttributes', type: RESOURCE_ATTRIBUTES }, 2: { name: 'nonResourceAttributes', type: NON_RESOURCE_ATTRIBUTES } } },
    },
    3: { name: 'status', type: ACCESS_REVIEW_STATUS },
  },
};

/** `SelfSubjectRulesReview` (its status is never read from a request, so only metadata and spec). */
export const SELF_SUBJECT_RULES_REVIEW: protobuf.MessageSchema = {
  fields: { 1: { name: 'metadata', type: OBJECT_META }, 2: { name: 'spec', type: { fields: { 1: str('namespace') } } } },
};

/** `TokenReview` (spec only besides metadata, for the same reason). */
export const TOKEN_REVIEW: protobuf.MessageSchema = {
  fields: { 1: { name: 'metadata', type: OBJECT_META }, 2: { name: 'spec', type: { fields: { 1: str('token'), 2: strs('audiences') } } } },
};

/** `SelfSubjectReview`: nothing of the request is read but its metadata. */
export const SELF_SUBJECT_REVIEW: protobuf.MessageSchema = { fields: { 1: { name: 'metadata', type: OBJECT_META } } };
