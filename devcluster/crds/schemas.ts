/**
 * The JSON shapes of CustomResourceDefinitions (`apiextensions.k8s.io/v1`) and their OpenAPI v3
 * schemas, as the devcluster receives them over the wire.
 *
 * Everything CRD-related in the devcluster speaks these types: `definitions` validates and defaults
 * the CRD itself, `structural` checks its schemas, and `pruning`, `defaulting`, `validation`,
 * `listsemantics` and `printercolumns` apply a version's schema or columns to custom objects.
 * The types describe well-formed input; the validators still narrow at runtime, because request
 * bodies are decoded JSON and may hold anything.
 */

/** One `x-kubernetes-validations` entry (a CEL rule, evaluated elsewhere). */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** An OpenAPI v3 schema node of a CRD version (`JSONSchemaProps`). */
export interface JSONSchemaProps {
  type?: string;
  format?: string;
  title?: string;
  description?: string;
  default?: unknown;
  example?: unknown;
  nullable?: boolean;
  enum?: unknown[];

  properties?: { [name: string]: JSONSchemaProps };
  required?: string[];
  additionalProperties?: JSONSchemaProps | boolean;
  maxProperties?: number;
  minProperties?: number;

  items?: JSONSchemaProps;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;

  maximum?: number;
  exclusiveMaximum?: boolean;
  minimum?: number;
  exclusiveMinimum?: boolean;
  multipleOf?: number;

  maxLength?: number;
  minLength?: number;
  pattern?: string;

  allOf?: JSONSchemaProps[];
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;

  externalDocs?: { description?: string; url?: string };

  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'granular' | 'atomic';
  'x-kubernetes-validations'?: ValidationRule[];
}

/** `spec.names` (and `status.acceptedNames`). */
export interface CustomResourceDefinitionNames {
  plural: string;
  singular?: string;
  shortNames?: string[];
  kind: string;
  listKind?: string;
  categories?: string[];
}

/** `spec.versions[*].subresources`. */
export interface CustomResourceSubresources {
  status?: Record<string, never>;
  scale?: {
    specReplicasPath: string;
    statusReplicasPath: string;
    labelSelectorPath?: string;
  };
}

/** `spec.versions[*].additionalPrinterColumns[*]`. */
export interface CustomResourceColumnDefinition {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** One entry of `spec.versions`. */
export interface CustomResourceDefinitionVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: CustomResourceSubresources;
  additionalPrinterColumns?: CustomResourceColumnDefinition[];
  selectableFields?: { jsonPath: string }[];
}

/** `spec.conversion`: `None`, or `Webhook` with a client configuration (D-CRD-21; the webhook is not called, D-CRD-22). */
export interface CustomResourceConversion {
  strategy: 'None' | 'Webhook';
  webhook?: {
    clientConfig?: { url?: string; caBundle?: string; service?: { namespace: string; name: string; path?: string; port?: number } };
    conversionReviewVersions?: string[];
  };
}

/** One entry of `status.conditions`. */
export interface CustomResourceDefinitionCondition {
  type: 'Established' | 'NamesAccepted' | 'NonStructuralSchema' | 'Terminating' | 'KubernetesAPIApprovalPolicyConformant' | string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** The CRD object (JSON form). */
export interface CustomResourceDefinition {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; [key: string]: unknown };
  spec: {
    group: string;
    names: CustomResourceDefinitionNames;
    scope: 'Namespaced' | 'Cluster';
    versions: CustomResourceDefinitionVersion[];
    conversion?: CustomResourceConversion;
    preserveUnknownFields?: boolean;
  };
  status?: {
    conditions?: CustomResourceDefinitionCondition[];
    acceptedNames?: CustomResourceDefinitionNames;
    storedVersions?: string[];
  };
}

/** The child schema for object key `key`: the declared property, else `additionalProperties` when it is a schema. */
export function propertySchema(schema: JSONSchemaProps | undefined, key: string): JSONSchemaProps | undefined {
  if (!schema) return undefined;
  const declared = schema.properties && Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
  if (declared) return declared;
  return typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
}

/** True when the node carries a usable default (upstream treats `default: null` as no default). */
export function hasDefault(schema: JSONSchemaProps | undefined): boolean {
  return schema !== undefined && schema.default !== undefined && schema.default !== null;
}
