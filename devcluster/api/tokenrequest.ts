/**
 * `serviceaccounts/token` (D-BI-17, D-AUTH-9): a TokenRequest answered as a 1.32 server answers it
 * (`kubectl create token`, projected-token clients, operators that hand out credentials). The
 * token is JWT-shaped — a header, the claims upstream puts in a service-account token (`iss`,
 * `sub`, `aud`, `exp`, `iat`, `nbf`, `jti`, and `kubernetes.io` naming the namespace, the account
 * and the bound Pod, Secret or Node), and a signature no one can verify: the devcluster serves no
 * signing keys. It is registered in the cluster's token table, so it authenticates as
 * `system:serviceaccount:<ns>:<name>` (groups `system:serviceaccounts`,
 * `system:serviceaccounts:<ns>`) until it expires, where its audiences allow (by default the API
 * server's own).
 *
 * As upstream: the body's name and namespace must be the account's, the account must exist,
 * `expirationSeconds` defaults to 3600 and must lie between 10 minutes and 2^32 seconds, a bound
 * object must exist (and be a Pod running as this account, a Secret or a Node), and a Pod-bound
 * token asked for 3607 seconds is valid for a year (the API server's expiration extension).
 */
import * as nodecrypto from 'node:crypto';
import * as tokens from '../auth/tokens.js';
import * as fielderrors from '../meta/fielderrors.js';
import * as statuses from '../server/statuses.js';
import * as actions from './actions.js';
import * as objects from './objects.js';
import * as reading from './reading.js';
import type { JsonObject } from '../json.js';
import * as json from '../json.js';

const KIND = { group: 'authentication.k8s.io', resource: 'TokenRequest', kind: 'TokenRequest' };
const MIN_SECONDS = 10 * 60;
const MAX_SECONDS = 2 ** 32;
/** A bound token asked for this long is one kubelets ask for; the API server extends it (`--service-account-extend-token-expiration`). */
const WARN_ONLY_SECONDS = 3607;
const EXTENDED_SECONDS = 365 * 24 * 60 * 60;
const KEY_ID = nodecrypto.createHash('sha256').update('kopf-gen devcluster service-account issuer').digest('base64url');

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A JWT-shaped token over the claims (with an unverifiable RS256-sized signature). */
function jwt(claims: JsonObject): string {
  return `${b64({ alg: 'RS256', kid: KEY_ID })}.${b64(claims)}.${nodecrypto.randomBytes(256).toString('base64url')}`;
}

interface Bound {
  readonly kind: 'pod' | 'secret' | 'node';
  readonly object: JsonObject;
}

/** The bound object of `spec.boundObjectRef`, checked as upstream checks it. */
async function boundObject(r: actions.SubresourceRequest, ref: JsonObject, account: string): Promise<Bound | undefined> {
  const apiVersion = String(ref['apiVersion'] ?? '');
  const kind = String(ref['kind'] ?? '');
  const name = String(ref['name'] ?? '');
  let bound: Bound;
  if (apiVersion === 'v1' && kind === 'Pod') {
    const pod = await reading.get(r.core, actions.typeOf(r.core, '', 'v1', 'pods'), r.namespace, name, undefined);
    const runsAs = String((json.isObject(pod['spec']) ? (pod['spec'] as JsonObject) : {})['serviceAccountName'] ?? '');
    if (runsAs !== account) throw statuses.badRequest(`cannot bind token for serviceaccount "${account}" to pod running with different serviceaccount name.`);
    bound = { kind: 'pod', object: pod };
  } else if (apiVersion === 'v1' && kind === 'Secret') {
    bound = { kind: 'secret', object: await reading.get(r.core, actions.typeOf(r.core, '', 'v1', 'secrets'), r.namespace, name, undefined) };
  } else if (apiVersion === 'v1' && kind === 'Node') {
    bound = { kind: 'node', object: await reading.get(r.core, actions.typeOf(r.core, '', 'v1', 'nodes'), undefined, name, undefined) };
  } else {
    const slash = apiVersion.indexOf('/');
    const gv = slash < 0 ? `/${apiVersion}` : apiVersion;
    throw statuses.badRequest(`cannot bind token to object of type ${gv}, Kind=${kind}`);
  }
  const uid = ref['uid'];
  if (typeof uid === 'string' && uid !== '' && uid !== objects.uidOf(bound.object)) {
    throw statuses.conflict(
      { group: '', resource: kind, kind },
      name,
      `the UID in the bound object reference (${uid}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  }
  return bound;
}

/** The `kubernetes.io` claim and the user's extra values for a token of `account`, maybe bound. */
function identity(account: JsonObject, bound: Bound | undefined, jti: string) {
  const ref = (o: JsonObject): JsonObject => ({ name: objects.nameOf(o), uid: objects.uidOf(o) });
  const claim: JsonObject = { namespace: objects.namespaceOf(account) ?? '', serviceaccount: ref(account) };
  const extra: Record<string, string[]> = { 'authentication.kubernetes.io/credential-id': [`JTI=${jti}`] };
  if (bound) {
    claim[bound.kind] = ref(bound.object);
    extra[`authentication.kubernetes.io/${bound.kind}-name`] = [objects.nameOf(bound.object)];
    extra[`authentication.kubernetes.io/${bound.kind}-uid`] = [objects.uidOf(bound.object)];
  }
  return { claim, extra };
}

/** The body may name the account and its namespace, but no other. */
function checkIdentity(name: string, namespace: string, body: JsonObject): void {
  const meta = objects.metaOf(body);
  const bodyName = meta['name'];
  if (typeof bodyName === 'string' && bodyName !== '' && bodyName !== name) {
    throw statuses.invalid(KIND, name, [fielderrors.invalid('metadata.name', bodyName, 'must match the service account name if specified')]);
  }
  const bodyNamespace = meta['namespace'];
  if (typeof bodyNamespace === 'string' && bodyNamespace !== '' && bodyNamespace !== namespace) {
    throw statuses.invalid(KIND, name, [fielderrors.invalid('metadata.namespace', bodyNamespace, 'must match the service account namespace if specified')]);
  }
}

/** upstream `ValidateTokenRequest` (reported with an empty name, as upstream does). */
function checkExpiration(expirationSeconds: number): void {
  if (!Number.isInteger(expirationSeconds) || expirationSeconds < MIN_SECONDS) {
    throw statuses.invalid(KIND, '', [fielderrors.invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration less than 10 minutes')]);
  }
  if (expirationSeconds > MAX_SECONDS) {
    throw statuses.invalid(KIND, '', [fielderrors.invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration larger than 2^32 seconds')]);
  }
}

/** `POST serviceaccounts/{name}/token`. */
export async function requestToken(r: actions.SubresourceRequest): Promise<actions.SubresourceReply> {
  const body = actions.actionBody(r, ['authentication.k8s.io/v1'], 'TokenRequest');
  const name = r.name!;
  const namespace = r.namespace!;
  const spec: JsonObject = json.isObject(body['spec']) ? { ...body['spec'] } : {};
  checkIdentity(name, namespace, body);
  const account = await reading.get(r.core, r.type, namespace, name, undefined);
  const audiences = Array.isArray(spec['audiences']) && spec['audiences'].length ? spec['audiences'].map(String) : [tokens.API_AUDIENCE];
  const expirationSeconds = spec['expirationSeconds'] === undefined || spec['expirationSeconds'] === null ? 3600 : Number(spec['expirationSeconds']);
  checkExpiration(expirationSeconds);
  const now = new Date(r.core.clock.now());
  const request: JsonObject = {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name, namespace, creationTimestamp: objects.formatTime(now.getTime()) },
    spec: { audiences, expirationSeconds, boundObjectRef: json.isObject(spec['boundObjectRef']) ? spec['boundObjectRef'] : null },
  };
  await actions.admitAction(r, r.type, 'token', 'TokenRequest', request);
  const ref = spec['boundObjectRef'];
  const bound = json.isObject(ref) ? await boundObject(r, ref, name) : undefined;
  const extended = bound?.kind === 'pod' && expirationSeconds === WARN_ONLY_SECONDS && audiences.every((a) => a === tokens.API_AUDIENCE);
  const validSeconds = extended ? EXTENDED_SECONDS : expirationSeconds;
  const jti = r.core.ids.uid();
  const { claim, extra } = identity(account, bound, jti);
  if (extended) claim['warnafter'] = Math.floor(now.getTime() / 1000) + expirationSeconds;
  const iat = Math.floor(now.getTime() / 1000);
  const token = jwt({
    aud: audiences,
    exp: iat + validSeconds,
    iat,
    iss: tokens.API_AUDIENCE,
    jti,
    'kubernetes.io': claim,
    nbf: iat,
    sub: `system:serviceaccount:${namespace}:${name}`,
  });
  if (!r.dryRun && r.tokens) {
    const entry = tokens.serviceAccountTokenEntry({ namespace, name, uid: objects.uidOf(account), now, expirationSeconds: validSeconds, token });
    r.tokens.add({ ...entry, notBefore: now, extra, audiences });
  }
  const expiration = objects.formatTime(now.getTime() + expirationSeconds * 1000);
  return { code: 201, body: { ...request, status: { token, expirationTimestamp: expiration } } };
}
