/**
 * Field errors: the unit of validation failure in the Kubernetes API.
 *
 * Every validator in the devcluster (object metadata, built-in strategies, CRD schemas, CEL rules)
 * returns a list of these; the request pipeline turns them into one 422 `Invalid` Status whose
 * message and `details.causes` follow D-WIRE-22 exactly. Keeping the rendering here means all
 * validators produce byte-identical texts for the same kind of problem.
 */

/** The machine-readable cause reasons of D-WIRE-22 (serialised under `causes[].reason`). */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueTypeInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueDuplicate'
  | 'FieldValueNotFound'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'InternalError';

export interface FieldError {
  readonly type: FieldErrorType;
  /** Dotted path with `[i]` for list indices and `[key]` for map keys, e.g. `spec.containers[0].image`. */
  readonly field: string;
  /** The offending value; rendered only for types that show a value. */
  readonly value?: unknown;
  /** Free text appended as `: <detail>`. */
  readonly detail?: string;
  /** The value is left out of the message (upstream's `field.OmitValueType`). */
  readonly omitValue?: boolean;
}

const TITLES: Record<FieldErrorType, string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueTypeInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueNotFound: 'Not found',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  InternalError: 'Internal error',
};

/** Types whose body omits the value (`Required value`, `Forbidden`, `Too long`, `Internal error`). */
const VALUELESS = new Set<FieldErrorType>(['FieldValueRequired', 'FieldValueForbidden', 'FieldValueTooLong', 'InternalError']);

/** Renders a value as upstream does: strings quoted, numbers/booleans bare, the rest as JSON. */
export function renderValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null || value === undefined) return 'null';
  return JSON.stringify(value);
}

/** The body of a field error: `Invalid value: "x": detail`, `Required value`, … */
export function renderBody(error: FieldError): string {
  let text = TITLES[error.type];
  if (!VALUELESS.has(error.type) && !error.omitValue) text += `: ${renderValue(error.value)}`;
  if (error.detail) text += `: ${error.detail}`;
  return text;
}

/** `field: body`, as used in the Status message. */
export function renderError(error: FieldError): string {
  return error.field ? `${error.field}: ${renderBody(error)}` : renderBody(error);
}

/** The message tail of an Invalid Status: one error bare, several in brackets, duplicates removed. */
export function renderList(errors: readonly FieldError[]): string {
  const texts = [...new Set(errors.map(renderError))];
  return texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
}

// Constructors, named after upstream's field.Required/Invalid/… helpers.
export const required = (field: string, detail?: string): FieldError => ({ type: 'FieldValueRequired', field, detail });
export const invalid = (field: string, value: unknown, detail?: string): FieldError => ({ type: 'FieldValueInvalid', field, value, detail });
/** `Invalid value: <detail>`, without the value (upstream's `field.Invalid(path, field.OmitValueType{}, …)`). */
export const invalidOmitted = (field: string, detail: string): FieldError => ({ type: 'FieldValueInvalid', field, detail, omitValue: true });
export const typeInvalid = (field: string, value: unknown, detail?: string): FieldError => ({ type: 'FieldValueTypeInvalid', field, value, detail });
export const forbidden = (field: string, detail?: string): FieldError => ({ type: 'FieldValueForbidden', field, detail });
export const duplicate = (field: string, value: unknown): FieldError => ({ type: 'FieldValueDuplicate', field, value });
export const notFound = (field: string, value: unknown): FieldError => ({ type: 'FieldValueNotFound', field, value });
export const tooLong = (field: string, detail: string): FieldError => ({ type: 'FieldValueTooLong', field, detail });
export const tooMany = (field: string, actual: unknown, detail: string): FieldError => ({ type: 'FieldValueTooMany', field, value: actual, detail });
export const notSupported = (field: string, value: unknown, supported: readonly unknown[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  value,
  detail: supported.length ? `supported values: ${supported.map(renderValue).join(', ')}` : undefined,
});

/** Joins a parent path and a child key the way field paths are written (`a.b`, `a[0]`, `a[key]`). */
export function child(parent: string, key: string | number, asMapKey = false): string {
  if (typeof key === 'number' || asMapKey) return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}
