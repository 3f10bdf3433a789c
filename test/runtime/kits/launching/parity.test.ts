/**
 * Kopf's command line, option by option (R-CLI-601): every option of `kopf run --help`, `kopf
 * freeze --help` and `kopf resume --help` of Kopf 1.44 — written down here from Kopf's `cli.py`,
 * with the variable Click reads it from (the automatic `KOPF_<COMMAND>_<PARAMETER NAME>`, after an
 * option's own `envvar`) — must exist in kopf-gen with the same flags, be read from the same
 * variables, give the same value from the variable as from the command line, and lose to the
 * command line. The table of docs/cli.md is checked against the same data.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as freezing from '../../../../runtime/kits/launching/freezing.js';
import * as launching from '../../../../runtime/kits/launching/launching.js';
import { captureOutput } from './support.js';

type Kind = 'flag' | 'string' | 'integer' | 'multiple' | 'choice';
type Which = 'run' | 'freeze' | 'resume';

/** One option of Kopf's: its flags, the variables Click reads it from (first set wins), how its value is read. */
interface KopfOption {
  readonly flags: readonly string[];
  readonly env: readonly string[];
  readonly kind: Kind;
}

/** Kopf's `logging_options`, for a command's prefix. */
function logging(prefix: string): KopfOption[] {
  return [
    { flags: ['-v', '--verbose'], env: [`${prefix}_VERBOSE`], kind: 'flag' },
    { flags: ['-d', '--debug'], env: [`${prefix}_DEBUG`], kind: 'flag' },
    { flags: ['-q', '--quiet'], env: [`${prefix}_QUIET`], kind: 'flag' },
    { flags: ['--log-format'], env: [`${prefix}_LOG_FORMAT`], kind: 'choice' },
    { flags: ['--log-refkey'], env: [`${prefix}_LOG_REFKEY`], kind: 'string' },
    { flags: ['--log-prefix'], env: [`${prefix}_LOG_PREFIX`], kind: 'flag' },
  ];
}

/** Kopf 1.44's options (kopf/cli.py), command by command. */
const KOPF_OPTIONS: Readonly<Record<Which, readonly KopfOption[]>> = {
  run: [
    ...logging('KOPF_RUN'),
    { flags: ['-A', '--all-namespaces'], env: ['KOPF_RUN_CLUSTERWIDE'], kind: 'flag' },
    { flags: ['-n', '--namespace'], env: ['KOPF_RUN_NAMESPACES'], kind: 'multiple' },
    { flags: ['--standalone'], env: ['KOPF_RUN_STANDALONE'], kind: 'flag' },
    { flags: ['--dev'], env: ['KOPF_RUN_DEV'], kind: 'flag' },
    { flags: ['-L', '--liveness'], env: ['KOPF_RUN_LIVENESS_ENDPOINT'], kind: 'string' },
    { flags: ['-P', '--peering'], env: ['KOPF_RUN_PEERING', 'KOPF_RUN_PEERING_NAME'], kind: 'string' },
    { flags: ['-p', '--priority'], env: ['KOPF_RUN_PRIORITY'], kind: 'integer' },
    { flags: ['-m', '--module'], env: ['KOPF_RUN_MODULES'], kind: 'multiple' },
  ],
  freeze: [
    ...logging('KOPF_FREEZE'),
    { flags: ['-n', '--namespace'], env: ['KOPF_FREEZE_NAMESPACES'], kind: 'multiple' },
    { flags: ['-A', '--all-namespaces'], env: ['KOPF_FREEZE_CLUSTERWIDE'], kind: 'flag' },
    { flags: ['-i', '--id'], env: ['KOPF_FREEZE_ID'], kind: 'string' },
    { flags: ['--dev'], env: ['KOPF_FREEZE_DEV'], kind: 'flag' },
    { flags: ['-P', '--peering'], env: ['KOPF_FREEZE_PEERING', 'KOPF_FREEZE_PEERING_NAME'], kind: 'string' },
    { flags: ['-p', '--priority'], env: ['KOPF_FREEZE_PRIORITY'], kind: 'integer' },
    { flags: ['-t', '--lifetime'], env: ['KOPF_FREEZE_LIFETIME'], kind: 'integer' },
    { flags: ['-m', '--message'], env: ['KOPF_FREEZE_MESSAGE'], kind: 'string' },
  ],
  resume: [
    ...logging('KOPF_RESUME'),
    { flags: ['-n', '--namespace'], env: ['KOPF_RESUME_NAMESPACES'], kind: 'multiple' },
    { flags: ['-A', '--all-namespaces'], env: ['KOPF_RESUME_CLUSTERWIDE'], kind: 'flag' },
    { flags: ['-i', '--id'], env: ['KOPF_RESUME_ID'], kind: 'string' },
    { flags: ['-P', '--peering'], env: ['KOPF_RESUME_PEERING', 'KOPF_RESUME_PEERING_NAME'], kind: 'string' },
  ],
};

/** kopf-gen's own options of `run` (not Kopf's), read from variables by the same rule. */
const KOPF_GEN_EXTRAS: Readonly<Record<string, readonly string[]>> = {
  '--lease': ['KOPF_RUN_LEASE'],
  '--lease-namespace': ['KOPF_RUN_LEASE_NAMESPACE'],
  '--shards': ['KOPF_RUN_SHARDS'],
  '--shard-id': ['KOPF_RUN_SHARD_ID'],
  '--shard-key': ['KOPF_RUN_SHARD_KEY'],
  '--metrics': ['KOPF_RUN_METRICS'],
  '--metrics-tls-dir': ['KOPF_RUN_METRICS_TLS_DIR'],
  '--no-log-prefix': [], // Click's secondary flag of --log-prefix
};

function variablesOf(which: Which): Array<[string, string[]]> {
  return which === 'run' ? launching.runOptionVariables() : freezing.touchOptionVariables(which);
}

/** The flags of a commander `flags` string: `-A, --all-namespaces` → `['-A', '--all-namespaces']`. */
function flagsOf(flags: string): string[] {
  return flags.split(/[ ,|]+/).filter((word) => word.startsWith('-'));
}

/** A sample value of an option, as typed on the command line and as set in its variable. */
function sample(option: KopfOption): { argv: string[]; env: string } {
  const flag = option.flags.at(-1)!;
  switch (option.kind) {
    case 'flag':
      return { argv: [flag], env: '1' };
    case 'integer':
      return { argv: [flag, '7'], env: '7' };
    case 'choice':
      return { argv: [flag, 'json'], env: 'JSON' };
    case 'multiple':
      return { argv: [flag, 'ns-a', flag, 'ns-b'], env: ' ns-a \tns-b ' };
    default:
      return {
        argv: [flag, flag === '--liveness' ? 'http://0.0.0.0:8080/healthz' : 'value-1'],
        env: flag === '--liveness' ? 'http://0.0.0.0:8080/healthz' : 'value-1',
      };
  }
}

/** What a command parses from `argv` and `env` (with the arguments its required options need), or its usage error. */
function parse(which: Which, option: KopfOption, argv: string[], env: NodeJS.ProcessEnv): unknown {
  const output = captureOutput();
  const needs = (flag: string, words: string[]): string[] => (option.flags.includes(flag) ? [] : words);
  try {
    const result =
      which === 'run'
        ? launching.parseRunArgs(argv, { env, output })
        : freezing.parseTouchArgs(which, [...needs('--peering', ['-P', 'ring']), ...(which === 'freeze' ? needs('--lifetime', ['-t', '60']) : []), ...argv], {
            env,
            output,
          });
    expect(output.text()).toBe('');
    return result;
  } catch (error) {
    return `usage error: ${(error as Error).message}`;
  }
}

/** Another value for the variable, which the command line must override. */
function otherValue(option: KopfOption): string {
  if (option.kind === 'flag') return '0';
  if (option.kind === 'integer') return '9';
  if (option.kind === 'choice') return 'plain';
  return option.flags.includes('--liveness') ? 'http://0.0.0.0:9/x' : 'other';
}

describe("Kopf's options and their variables (R-CLI-601)", () => {
  for (const which of ['run', 'freeze', 'resume'] as const) {
    it(`R-CLI-601 every option of kopf ${which} exists in kopf-gen ${which} with Kopf's flags and variables, and nothing else lacks a variable`, () => {
      const ours = variablesOf(which);
      for (const option of KOPF_OPTIONS[which]) {
        const match = ours.find(([flags]) => option.flags.every((flag) => flagsOf(flags).includes(flag)));
        expect(match, `kopf-gen ${which} ${option.flags.join('/')}`).toBeDefined();
        expect(match![1], `the variables of ${which} ${option.flags.join('/')}`).toEqual(option.env);
      }
      for (const [flags, variables] of ours) {
        const long = flagsOf(flags).at(-1)!;
        if (long === '--help') continue;
        const kopf = KOPF_OPTIONS[which].find((option) => option.flags.includes(long));
        expect(kopf ?? KOPF_GEN_EXTRAS[long], `${which} ${flags}: Kopf's, or a listed extra of kopf-gen's`).toBeDefined();
        if (kopf === undefined) expect(variables, `${which} ${flags}`).toEqual(KOPF_GEN_EXTRAS[long]);
      }
    });

    for (const option of KOPF_OPTIONS[which]) {
      for (const envVar of option.env) {
        it(`R-CLI-601 kopf-gen ${which} reads ${option.flags.join('/')} from ${envVar} as from the command line; the command line wins`, () => {
          const { argv, env } = sample(option);
          const fromArgv = parse(which, option, argv, {});
          expect(parse(which, option, [], { [envVar]: env })).toEqual(fromArgv);
          expect(parse(which, option, [], {})).not.toEqual(fromArgv); // the variable did something
          expect(parse(which, option, argv, { [envVar]: otherValue(option) })).toEqual(fromArgv);
        });
      }
    }
  }

  it("R-CLI-601 flags take Click's booleans in any case; an empty variable is unset; anything else is a usage error naming the variable", () => {
    for (const word of ['1', 'true', 'T', 'yes', 'Y', 'on', 'TRUE', ' On ']) {
      expect(launching.parseRunArgs([], { env: { KOPF_RUN_CLUSTERWIDE: word }, output: captureOutput() })?.clusterwide, word).toBe(true);
    }
    for (const word of ['0', 'false', 'F', 'no', 'N', 'off', 'OFF', '']) {
      expect(launching.parseRunArgs([], { env: { KOPF_RUN_CLUSTERWIDE: word }, output: captureOutput() })?.clusterwide, word).toBe(false);
    }
    expect(launching.parseRunArgs([], { env: { KOPF_RUN_LOG_PREFIX: 'off' }, output: captureOutput() })?.logging.logPrefix).toBe(false);
    const output = captureOutput();
    expect(() => launching.parseRunArgs([], { env: { KOPF_RUN_STANDALONE: 'sure' }, output })).toThrow('KOPF_RUN_STANDALONE');
    expect(output.text().split('\n')[0]).toBe(
      'error: environment variable KOPF_RUN_STANDALONE "sure" is invalid. Not a boolean (1/0, true/false, yes/no, on/off).',
    );
  });

  it('R-CLI-601 options from variables conflict as on the command line, naming the variable', () => {
    const output = captureOutput();
    expect(() => launching.parseRunArgs(['-n', 'a'], { env: { KOPF_RUN_CLUSTERWIDE: 'yes' }, output })).toThrow(
      "the environment variable KOPF_RUN_CLUSTERWIDE cannot be used with option '-n, --namespace <pattern>'",
    );
    expect(() => launching.parseRunArgs([], { env: { KOPF_RUN_STANDALONE: '1', KOPF_RUN_PEERING_NAME: 'ring' }, output })).toThrow(
      'the environment variable KOPF_RUN_STANDALONE cannot be used together with the environment variable KOPF_RUN_PEERING_NAME',
    );
    expect(launching.parseRunArgs([], { env: { KOPF_RUN_DEV: 'on' }, output: captureOutput() })?.priority).toBe(666);
  });

  it("R-CLI-602 --log-format is case-insensitive, as Kopf's click.Choice(case_sensitive=False)", () => {
    for (const word of ['JSON', 'Json', 'json']) {
      expect(launching.parseRunArgs(['--log-format', word], { env: {}, output: captureOutput() })?.logging.logFormat).toBe('json');
      expect(freezing.parseTouchArgs('resume', ['-P', 'x', '--log-format', word], { env: {}, output: captureOutput() })?.logging?.logFormat).toBe('json');
    }
    const output = captureOutput();
    expect(() => launching.parseRunArgs(['--log-format', 'xml'], { env: {}, output })).toThrow('Allowed choices are plain, full, json.');
  });

  it('R-CLI-601 the table of docs/cli.md lists every option of Kopf with its variables', () => {
    const page = fs.readFileSync(path.resolve(import.meta.dirname, '../../../../docs/cli.md'), 'utf8');
    const section = page.split("## Kopf's options and their environment variables")[1]?.split('\n## ')[0] ?? '';
    const rows = section
      .split('\n')
      .filter((line) => line.startsWith('| `kopf'))
      .map((line) => line.split('|').map((cell) => cell.trim()));
    const expected = (['run', 'freeze', 'resume'] as const).flatMap((which) =>
      KOPF_OPTIONS[which].map((option) => [`\`kopf ${which} ${option.flags.join(', ')}\``, option.env.map((v) => `\`${v}\``).join(', ')]),
    );
    expect(rows.map((cells) => [cells[1], cells[2]])).toEqual(expected);
  });
});
