/**
 * Rendering: the Handlebars templates of `templates/`, compiled once, applied to contexts that
 * scaffolding.ts builds.
 *
 * Templates hold no logic beyond placeholders, conditionals and loops; the only helper is `json`
 * (a value as a JSON literal, which is also valid TypeScript and YAML). Output is not HTML, so
 * nothing is escaped; templates are compiled in strict mode, so a misspelt placeholder is an
 * error rather than an empty string.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import Handlebars from 'handlebars';

/** The folder of the templates (beside the generator in the package). */
export const TEMPLATES_DIR = fileURLToPath(new URL('../templates/', import.meta.url));

/** The names of every template, relative to `templates/`, without `.hbs`. */
export const TEMPLATE_NAMES = [
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'kopf-gen.json',
  'gitignore',
  'Dockerfile',
  'dockerignore',
  'README.md',
  'src/main.ts',
  'src/generated/index.ts',
  'src/generated/handlers.ts',
  'src/generated/admission.ts',
  'src/handlers/kind.ts',
  'src/handlers/reconcile.ts',
  'src/conversions/version.ts',
  'test/kind.test.ts',
  'test/reconcile.test.ts',
  'test/conversion.test.ts',
  'test/rbac-development.yaml',
  'samples/kind.yaml',
  'deploy/rbac.yaml',
  'deploy/deployment.yaml',
  'deploy/webhooks.yaml',
  'deploy/conversion.yaml',
  'deploy/peering.yaml',
  'deploy/networkpolicy.yaml',
] as const;

export type TemplateName = (typeof TEMPLATE_NAMES)[number];

const engine = Handlebars.create();
engine.registerHelper('json', (value: unknown) => JSON.stringify(value));
const compiled = new Map<TemplateName, Handlebars.TemplateDelegate>();

/** Renders one template with a context. */
export function render(name: TemplateName, context: object): string {
  let template = compiled.get(name);
  if (!template) {
    const text = fs.readFileSync(path.join(TEMPLATES_DIR, `${name}.hbs`), 'utf8');
    template = engine.compile(text, { noEscape: true, strict: true });
    compiled.set(name, template);
  }
  return template(context);
}
