/**
 * Where commands print. Kept apart from the reporting helpers so the command line can set up its
 * output without loading the generator (`kopf-gen run` should start fast).
 */

/** Where commands print: stdout for results, stderr for notes and warnings. */
export interface Output {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /**
   * Reads standard input (for `--crd -`): all of it, or, when there is more than `maxBytes`, its
   * first `maxBytes + 1` bytes (enough to tell it is too large, without holding it all).
   */
  readonly stdin: (maxBytes: number) => Promise<string>;
}

/** The process's streams. */
export const processOutput: Output = {
  out: (text) => {
    process.stdout.write(text);
  },
  err: (text) => {
    process.stderr.write(text);
  },
  stdin: async (maxBytes) => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      chunks.push(bytes);
      size += bytes.length;
      if (size > maxBytes) break;
    }
    return Buffer.concat(chunks)
      .subarray(0, maxBytes + 1)
      .toString('utf8');
  },
};
