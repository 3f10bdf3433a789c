/**
 * Where the command line prints. Commands take an `Output` instead of writing to the process's
 * streams, so tests run them in-process and read what they said; `stdin` is here because
 * `--crd -` reads manifests from standard input.
 */

/** Where commands print: stdout for results, stderr for notes, warnings and errors. */
export interface Output {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Reads all of standard input. */
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
