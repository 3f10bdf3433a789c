/**
 * Where the operator's commands print: help, usage errors, results and the final error line. The
 * commands take a `CommandOutput` instead of writing to the process's streams, so that the test
 * runner captures what they say and the `kopf-gen` binary passes its own. Kept apart from the
 * commands so that the binary can print without loading the runtime.
 */

/** Where help and usage errors are printed. */
export interface CommandOutput {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** The process's streams. */
export const processOutput: CommandOutput = {
  out: (text) => {
    process.stdout.write(text);
  },
  err: (text) => {
    process.stderr.write(text);
  },
};
