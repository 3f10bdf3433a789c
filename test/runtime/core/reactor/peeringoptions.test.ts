/**
 * The operator's peering options (`peeringName`, `priority`, `identity`, `standalone`) are checked
 * before anything starts: malformed values and combinations in which one option would do nothing
 * are refused with a `PeeringOptionsError` naming them, never ignored (R-PEER-2, R-PEER-3, R-PEER-8).
 */
import { describe, expect, it } from 'vitest';

import * as settings from '../../../../runtime/cogs/configs/settings.js';
import { OperatorRegistry } from '../../../../runtime/core/intents/registry.js';
import * as running from '../../../../runtime/core/reactor/running.js';
import * as reactorErrors from '../../../../runtime/core/reactor/errors.js';

describe('peering options of operator()', () => {
  const registry = new OperatorRegistry();

  it.each<[string, running.OperatorOptions, string]>([
    ['R-PEER-2 an empty peeringName', { peeringName: '' }, 'peeringName must be a non-empty name'],
    ['R-PEER-3 an empty identity', { identity: '' }, 'identity must be a non-empty string'],
    ['R-PEER-8 a fractional priority', { priority: 1.5 }, 'priority must be an integer, got 1.5'],
    ['R-PEER-8 a priority that is not a number', { priority: Number.NaN }, 'priority must be an integer, got NaN'],
    ['R-PEER-2 standalone with peeringName', { standalone: true, peeringName: 'ring' }, 'standalone and peeringName cannot be used together'],
    ['R-PEER-8 standalone with priority', { standalone: true, priority: 100 }, 'standalone and priority cannot be used together'],
    ['R-PEER-3 standalone with identity', { standalone: true, identity: 'me' }, 'standalone and identity cannot be used together'],
  ])('%s is refused before anything starts', async (_title, options, message) => {
    const refused = running.spawnTasks({ clusterwide: true, registry, settings: new settings.OperatorSettings(), ...options });
    await expect(refused).rejects.toBeInstanceOf(reactorErrors.PeeringOptionsError);
    await expect(refused).rejects.toThrow(message);
  });

  it.each<[string, running.OperatorOptions, Partial<settings.PeeringSettings>]>([
    ['R-PEER-2 peeringName makes peering mandatory with that object', { peeringName: 'ring' }, { name: 'ring', mandatory: true, standalone: false }],
    ['R-PEER-8 priority is written into the settings', { priority: 100 }, { priority: 100, mandatory: false }],
    ['R-PEER-2 standalone alone', { standalone: true }, { standalone: true, mandatory: false }],
  ])('%s', async (_title, options, expected) => {
    const s = new settings.OperatorSettings();
    const stop = new AbortController();
    stop.abort();
    const tasks = await running.spawnTasks({ clusterwide: true, registry, settings: s, stopFlag: stop.signal, ...options });
    expect(s.peering).toMatchObject(expected);
    await running.runTasks(tasks);
  });
});
