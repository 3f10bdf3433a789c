/**
 * A multi-version project for the tests that take a generated project with converters end to end
 * (the packaged project of test/packaging, the linked one of test/generator/e2e-conversion): a CRD
 * whose storage version v2 is the hub, v1 renames the required `spec.color` to `spec.colour`, and
 * v2beta1 has v2's schema. `init` writes a converter stub per spoke; the v1 stub refuses the
 * renamed field until a user maps it, which `mapRenamedField` does the way the stub's and its
 * test's TODO comments say (the mapping in the stub, the refusals in the test replaced).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as yaml from 'yaml';

/** The CRD's name. */
export const CRD_NAME = 'widgets.example.com';

/** The CRD, as a file of crds/ would hold it (strategy Webhook, a placeholder service until the operator points it at itself). */
export function widgetsCrd(): string {
  const version = (name: string, storage: boolean, colorField: string) => ({
    name,
    served: true,
    storage,
    schema: {
      openAPIV3Schema: {
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            required: ['size', colorField],
            properties: { size: { type: 'integer' }, [colorField]: { type: 'string' } },
          },
        },
      },
    },
  });
  return yaml.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: CRD_NAME },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1'], clientConfig: { service: { namespace: 'default', name: 'placeholder', path: '/convert' } } },
      },
      versions: [version('v2', true, 'color'), version('v1', false, 'colour'), version('v2beta1', false, 'color')],
    },
  });
}

/** The files `init` writes for the converters. */
export const STUB = 'src/conversions/widget.v1.ts';
export const STUB_TEST = 'test/conversions/widget.v1.test.ts';
export const IDENTICAL_STUB = 'src/conversions/widget.v2beta1.ts';

function edit(file: string, change: (text: string) => string): void {
  const before = fs.readFileSync(file, 'utf8');
  const after = change(before);
  if (after === before) throw new Error(`${file} is not as generated any more: update the edit in this helper`);
  fs.writeFileSync(file, after);
}

function replaceExactly(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`the generated text lacks ${JSON.stringify(from)}: update the edit in this helper`);
  return text.replace(from, to);
}

/**
 * Maps `spec.colour` (v1) to `spec.color` (v2) in the v1 stub, and turns the refusals its test
 * expects into the round trips and end-to-end reads the TODO comments give.
 */
export function mapRenamedField(project: string): void {
  edit(path.join(project, STUB), (text) => {
    let mapped = replaceExactly(text, '  unconverted("spec.colour", colour);\n', '');
    mapped = replaceExactly(mapped, 'color: required("spec.color"),', 'color: colour,');
    mapped = replaceExactly(mapped, '  unconverted("spec.color", color);\n', '');
    return replaceExactly(mapped, 'colour: required("spec.colour"),', 'colour: color,');
  });
  edit(path.join(project, STUB_TEST), (text) =>
    text
      .replace(/expect\(\(\) => roundTrip\(conversion, (.*?)\)\)\.toThrow\(\/.*?\/\);/g, 'roundTrip(conversion, $1);')
      .replace(/ {4}await expect\(\n[^\n]*\n {4}\)\.rejects\.toThrow\([^\n]*\n((?: {4}\/\/ [^\n]*\n)+)/g, (_, lines: string) =>
        lines.replaceAll('    // ', '    '),
      ),
  );
}
