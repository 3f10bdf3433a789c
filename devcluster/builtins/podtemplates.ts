/**
 * PodTemplates (D-BI-15): a stored pod template, defaulted and validated like the template of any
 * workload (the pod-template defaults of D-BI-7 and upstream's ValidatePodTemplateSpec), so that
 * what a client reads back matches a real server's.
 */
import type * as resources from '../api/resources.js';
import * as strategies from './strategies.js';
import * as workloads from './workloads.js';
import type { JsonObject } from '../json.js';

function withDefaults(obj: JsonObject): JsonObject {
  return { ...obj, template: workloads.defaultTemplate(obj['template']) };
}

/** The PodTemplate strategy; see the module comment. */
export const podTemplateStrategy: resources.Strategy = strategies.plainStrategy('PodTemplate', {
  prepareForCreate: (obj) => withDefaults(obj),
  prepareForUpdate: (obj) => withDefaults(obj),
  validate: (obj) => workloads.templateErrors(obj['template'], 'template'),
});
