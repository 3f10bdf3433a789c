/**
 * Where commands print. Kept apart from the reporting helpers so the command line can set up its
 * output without loading the generator (`kopf-gen run` should start fast).
 */

/** Where commands print: stdout for results, stderr for notes and warnings. */
export interface Output {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Reads all of standard input (for `--crd -`). */
  readonly stdin: () => Promise<string>;
}

/** The process's streams. */
export const processOutput: Output = {
  out: (text) => {
    process.stdout.write(text);
  },
  err: (text) => {
    process.stderr.write(text);
  },
  stdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    return Buffer.concat(chunks).toString('utf8');
  },
};
