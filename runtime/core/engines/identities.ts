/**
 * Who this operator is among its peers: the key of its entry in a peering object's status and the
 * holder's name of a Lease. It must be unique per running process, yet readable by a person who
 * looks at the status: in a cluster it is the pod's name (`$POD_ID`, set from `metadata.name` in
 * the Deployment), elsewhere it says who runs it where and since when, with a few random
 * characters for two processes started in the same second (R-PEER-3).
 *
 * The `freeze`/`resume` commands use the stable `<user>@<host>` instead, so that `resume` finds the
 * entry that `freeze` wrote.
 *
 * Everything that varies — the environment, the time, the randomness, the user and the host — is
 * injected, so the format is testable to the character.
 */

import * as os from 'node:os';
import type * as clocks from '../../cogs/aio/clocks.js';

/** The characters of the random suffix: a-z without `g`, and digits (Kopf's alphabet). */
export const SUFFIX_ALPHABET = 'abcdefhijklmnopqrstuvwxyz0123456789';

/** What `detectOwnId` reads; everything defaults to the process's. */
export interface IdentitySources {
  /** `true` for the commands (`<user>@<host>`); `false` for operators (with time and suffix). */
  readonly manual: boolean;
  /** Default `process.env`: `POD_ID` wins; `LOGNAME`, `USER`, `LNAME`, `USERNAME` name the user. */
  readonly env?: NodeJS.ProcessEnv;
  /** Default: the real clock (the UTC start time in the identity). */
  readonly clock?: clocks.Clock;
  /** A number in [0, 1) for each random character; default `Math.random`. */
  readonly random?: () => number;
  /** Default: the OS user of the process (after the environment variables above). */
  readonly user?: string;
  /** Default: the host name without `.local`/`.localdomain`. */
  readonly host?: string;
}

/**
 * The identity of this operator (R-PEER-3): `$POD_ID` if set and not empty; else
 * `<user>@<host>` for `manual`, or `<user>@<host>/<UTC YYYYmmddHHMMSS>/<3 random characters>`.
 *
 * @example
 * detectOwnId({ manual: false }) // 'alice@laptop/20261124101500/x7k'
 * detectOwnId({ manual: true }) // 'alice@laptop'
 */
export function detectOwnId(sources: IdentitySources): string {
  const env = sources.env ?? process.env;
  const pod = env['POD_ID'];
  if (pod !== undefined && pod !== '') return pod;
  const who = `${sources.user ?? userOf(env)}@${sources.host ?? hostName()}`;
  if (sources.manual) return who;
  const now = new Date(sources.clock?.now() ?? Date.now());
  const stamp = [now.getUTCFullYear(), now.getUTCMonth() + 1, now.getUTCDate(), now.getUTCHours(), now.getUTCMinutes(), now.getUTCSeconds()]
    .map((part, index) => String(part).padStart(index === 0 ? 4 : 2, '0'))
    .join('');
  const random = sources.random ?? Math.random;
  let suffix = '';
  for (let i = 0; i < 3; i += 1) suffix += SUFFIX_ALPHABET[Math.min(SUFFIX_ALPHABET.length - 1, Math.floor(random() * SUFFIX_ALPHABET.length))];
  return `${who}/${stamp}/${suffix}`;
}

/** The user's name as Python's `getpass.getuser()` finds it: environment first, then the OS. */
function userOf(env: NodeJS.ProcessEnv): string {
  for (const name of ['LOGNAME', 'USER', 'LNAME', 'USERNAME']) {
    const value = env[name];
    if (value) return value;
  }
  try {
    return os.userInfo().username;
  } catch {
    return 'unknown'; // a container user without a passwd entry
  }
}

/** The host name without the suffixes that say nothing (`.local`, `.localdomain`). */
export function hostName(name = os.hostname()): string {
  let host = name;
  for (let changed = true; changed; ) {
    changed = false;
    for (const suffix of ['.local', '.localdomain']) {
      if (host.endsWith(suffix) && host.length > suffix.length) {
        host = host.slice(0, -suffix.length);
        changed = true;
      }
    }
  }
  return host;
}
