/**
 * Options from environment variables, as Kopf's command line reads them (R-CLI-601): Kopf's
 * commands are Click commands with the automatic prefix `KOPF`, so every option of `kopf run` is
 * also read from `KOPF_RUN_<NAME>` (`freeze`: `KOPF_FREEZE_<NAME>`, `resume`: `KOPF_RESUME_<NAME>`),
 * where NAME is the option's parameter name upper-cased — `KOPF_RUN_CLUSTERWIDE` for `-A`,
 * `KOPF_RUN_NAMESPACES` for `-n`, `KOPF_RUN_LOG_FORMAT` for `--log-format`. A deployment sets them
 * once in its pod spec instead of editing the container's arguments.
 *
 * Click's rules, kept here: the command line wins over the environment, the environment over the
 * default; an empty variable is unset; an option with its own variable (`KOPF_RUN_PEERING`) reads
 * that one first, then the automatic one; flags take Click's booleans (`1/0`, `true/false`,
 * `t/f`, `yes/no`, `y/n`, `on/off`, any case); repeatable options split the value on whitespace;
 * choices are matched without regard to case where Kopf's are. The commands declare their options
 * with `EnvOption` records and call `applyEnvironment()` after parsing the command line.
 */

import { type Command, InvalidArgumentError } from 'commander';

/** How an option's value is read from its variable. */
export type EnvKind = 'flag' | 'string' | 'integer' | 'multiple';

/** One option that may come from the environment. */
export interface EnvOption {
  /** The option's key in the parsed options (commander's attribute name, e.g. `allNamespaces`). */
  readonly key: string;
  /** The variables, the first set one wins: an option's own variable first, then the automatic one. */
  readonly envVars: readonly string[];
  readonly kind: EnvKind;
  /** Checks and converts a string value (as the option's own parser does); throws InvalidArgumentError. */
  readonly parse?: (value: string) => unknown;
}

const TRUE = new Set(['1', 'true', 't', 'yes', 'y', 'on']);
const FALSE = new Set(['0', 'false', 'f', 'no', 'n', 'off']);

/**
 * A boolean as Click reads it (case-insensitive, surrounding blanks ignored).
 *
 * @returns `undefined` for anything else.
 * @example
 * parseBoolean('Yes') // true
 * parseBoolean('off') // false
 */
export function parseBoolean(text: string): boolean | undefined {
  const word = text.trim().toLowerCase();
  if (TRUE.has(word)) return true;
  if (FALSE.has(word)) return false;
  return undefined;
}

/** An integer as Click's `int` reads it (blanks around it allowed). */
export function parseInteger(value: string): number {
  if (!/^[+-]?\d+$/.test(value.trim())) throw new InvalidArgumentError('Not an integer.');
  return Number(value);
}

/**
 * A parser of one of `choices`, matched without regard to case (Click's `case_sensitive=False`);
 * the result is the choice as declared.
 */
export function caseInsensitiveChoice<T extends string>(choices: readonly T[]): (value: string) => T {
  return (value) => {
    const found = choices.find((choice) => choice.toLowerCase() === value.trim().toLowerCase());
    if (found === undefined) throw new InvalidArgumentError(`Allowed choices are ${choices.join(', ')}.`);
    return found;
  };
}

/** The variables of an option: `own` (if any) first, then `<prefix>_<NAME>`. */
export function envVarsOf(prefix: string, name: string, own?: string): string[] {
  const automatic = `${prefix}_${name.toUpperCase()}`;
  return own === undefined || own === automatic ? [automatic] : [own, automatic];
}

/** Which variable an option was taken from, after `applyEnvironment()`. */
export type EnvSources = ReadonlyMap<string, string>;

/**
 * Sets every option that the command line left unset (or at its default) from its first non-empty
 * variable, with the source `env`.
 *
 * @returns the variable each option was taken from, by key.
 * @throws InvalidArgumentError naming the variable for a value the option does not accept.
 */
export function applyEnvironment(command: Command, options: readonly EnvOption[], env: NodeJS.ProcessEnv): EnvSources {
  const sources = new Map<string, string>();
  for (const option of options) {
    const source = command.getOptionValueSource(option.key);
    if (source !== undefined && source !== 'default') continue;
    const envVar = option.envVars.find((name) => env[name]);
    if (envVar === undefined) continue;
    command.setOptionValueWithSource(option.key, convert(option, envVar, env[envVar]!), 'env');
    sources.set(option.key, envVar);
  }
  return sources;
}

function convert(option: EnvOption, envVar: string, raw: string): unknown {
  try {
    switch (option.kind) {
      case 'flag': {
        const value = parseBoolean(raw);
        if (value === undefined) throw new InvalidArgumentError('Not a boolean (1/0, true/false, yes/no, on/off).');
        return value;
      }
      case 'multiple': {
        const words = raw.split(/\s+/).filter((word) => word !== '');
        return option.parse ? words.map((word) => option.parse!(word)) : words;
      }
      default:
        return option.parse ? option.parse(raw) : raw;
    }
  } catch (error) {
    if (error instanceof InvalidArgumentError) {
      throw new InvalidArgumentError(`environment variable ${envVar} ${JSON.stringify(raw)} is invalid. ${error.message}`);
    }
    throw error;
  }
}

/**
 * How a usage error names where an option came from: `option '--dev'`, or `the environment
 * variable KOPF_RUN_DEV`.
 */
export function describeSource(command: Command, sources: EnvSources, key: string, flags: string): string {
  const envVar = sources.get(key);
  return envVar !== undefined && command.getOptionValueSource(key) === 'env' ? `the environment variable ${envVar}` : `option '${flags}'`;
}
