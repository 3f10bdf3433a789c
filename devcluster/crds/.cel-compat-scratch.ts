import type * as schemas from './schemas.js';
import * as celrules from './cel.js';
export const probe = (s: schemas.JSONSchemaProps) => celrules.compileRules(s);
