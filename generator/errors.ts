/**
 * The one error the generator raises, and where in its input a problem is.
 *
 * Every stage that can refuse the input (loading finds no YAML or no Kubernetes object, validation
 * finds a CRD the API server would refuse or the generator cannot map faithfully) throws a
 * `GeneratorError` whose message names the file, the document index and the JSON path, so a user
 * can go straight to the offending line.
 * The error lives apart from the stages so that each of them can raise it without importing the
 * others.
 */

/** Why the generator refused its input. */
export type GeneratorErrorCode =
  | 'not-yaml'
  | 'too-deep'
  | 'cyclic-alias'
  | 'not-a-crd'
  | 'unsupported-version'
  | 'invalid-crd'
  | 'names-conflict'
  | 'no-schema'
  | 'non-structural'
  | 'ref-not-allowed'
  | 'unknown-type'
  | 'invalid-enum'
  | 'invalid-default'
  | 'too-many-fields';

/** Where in the input a problem is. */
export interface SourceLocation {
  /** The source path as given to the loader. */
  readonly file: string;
  /** 0-based index of the YAML document in the file. */
  readonly documentIndex: number;
  /** Rendered JSON path inside the document (`''` for the document as a whole). */
  readonly jsonPath: string;
}

/**
 * A problem with the generator's input. The message always names the file, the document index and
 * the JSON path, e.g. `crds/widget.yaml, document 2, spec.versions[0].schema.openAPIV3Schema
 * .properties.spec.properties.size: unknown type "integr"`.
 */
export class GeneratorError extends Error implements SourceLocation {
  override readonly name = 'GeneratorError';
  readonly file: string;
  readonly documentIndex: number;
  readonly jsonPath: string;
  /** The problem without its location. */
  readonly detail: string;

  constructor(
    readonly code: GeneratorErrorCode,
    where: SourceLocation,
    detail: string,
    options?: ErrorOptions,
  ) {
    const place = where.jsonPath ? `${where.file}, document ${where.documentIndex}, ${where.jsonPath}` : `${where.file}, document ${where.documentIndex}`;
    super(`${place}: ${detail}`, options);
    this.file = where.file;
    this.documentIndex = where.documentIndex;
    this.jsonPath = where.jsonPath;
    this.detail = detail;
  }
}
