/**
 * The objects of an admission request in the version a webhook asked for (D-ADM-3, D-CONV-411).
 * Under `matchPolicy: Equivalent` a webhook registered for another version of the same resource
 * gets `object` and `oldObject` converted to that version, and a mutating webhook's patch is made
 * to the converted object, which is converted back to the request's version before the request
 * goes on. For CRDs whose conversion calls a webhook this is one conversion webhook call per object
 * (old object first), as kube-apiserver's "versioned attributes" do; for the others it is the
 * synchronous conversion the type has always had.
 *
 * Like upstream, the view is kept while consecutive webhooks want the same version: a patched view
 * is only converted back when a webhook wants another version, or when the pass ends.
 */
import * as resources from '../api/resources.js';
import type * as core from '../api/core.js';
import * as keyorder from '../meta/keyorder.js';
import type { JsonObject } from '../json.js';

/** `object` and `oldObject` as one webhook is sent them. */
export interface Sent {
  readonly object: JsonObject | undefined;
  readonly oldObject: JsonObject | undefined;
}

/** One object of `t`'s kind in `version`; asynchronous only for CRDs whose conversion calls out. */
export async function inVersion(t: resources.ResourceType, obj: JsonObject | undefined, version: string): Promise<JsonObject | undefined> {
  if (!obj) return undefined;
  const apiVersion = resources.apiVersionOf({ group: t.group, version });
  const convertObjects = t.strategy.convertObjects;
  if (convertObjects) {
    if (obj['apiVersion'] === apiVersion) return keyorder.arrange(t, obj);
    // Upstream converts without pruning or defaulting here (its converter, not the storage codec).
    const [converted] = await convertObjects([obj], apiVersion);
    return keyorder.arrange(t, converted!);
  }
  const ordered = keyorder.arrange(t, obj);
  if (version === t.version) return ordered;
  return t.strategy.convertTo ? t.strategy.convertTo(ordered, apiVersion) : { ...ordered, apiVersion };
}

/** The objects of one request, viewed in one webhook's version at a time. */
export class VersionedAttributes {
  private view: { version: string; sent: Sent; dirty: boolean } | undefined;
  private current: JsonObject | undefined;

  constructor(private readonly attrs: core.AdmissionAttributes) {
    this.current = attrs.object;
  }

  /** The objects in `version` (converting back a patched view of another version first). */
  async as(version: string): Promise<Sent> {
    if (this.view?.version === version) return this.view.sent;
    await this.flush();
    const t = this.attrs.type;
    const oldObject = await inVersion(t, this.attrs.oldObject, version);
    const object = this.attrs.operation === 'DELETE' ? undefined : await inVersion(t, this.current, version);
    this.view = { version, sent: { object, oldObject }, dirty: false };
    return this.view.sent;
  }

  /** A mutating webhook patched the object of the current view. */
  patched(object: JsonObject): void {
    if (!this.view) throw new Error('patched() before as()');
    this.view = { ...this.view, sent: { ...this.view.sent, object }, dirty: true };
  }

  /** The request's object in its own version, with every patch so far (the same object when none). */
  async result(): Promise<JsonObject | undefined> {
    await this.flush();
    return this.current;
  }

  private async flush(): Promise<void> {
    const view = this.view;
    this.view = undefined;
    if (!view?.dirty || !view.sent.object) return;
    const t = this.attrs.type;
    this.current = await inVersion(t, view.sent.object, t.version);
  }
}
