/**
 * kopf-gen/runtime — the public face of the operator framework.
 *
 * Flat named exports; types are exported with `export type` separately from values.
 */
export { resource, isDescriptor } from './cogs/structs/resources.js';
export type {
  ObjectMeta, OwnerReference, ManagedFieldsEntry, KubernetesObject, ResourceInfo, ResourceDescriptor, BodyOf,
} from './cogs/structs/resources.js';
