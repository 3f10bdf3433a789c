/**
 * The type-checking half of codeblocks.ts, run in a worker thread (test/support/threads.ts): the
 * TypeScript compiler is synchronous, and checking a page's blocks takes seconds to tens of seconds
 * of CPU, which the test worker's event loop must not be held for. The thread keeps one caching
 * compiler host for all the pages it checks, so the runtime's sources and the libraries are parsed
 * once per test file, not once per page.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

import * as threads from '../support/threads.js';
import type { CodeBlock } from './codeblocks.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A type error of a block, located in its page. */
export interface BlockError {
  readonly where: string;
  readonly message: string;
}

/** One page's blocks, already written into `dir`. */
export interface Request {
  readonly page: string;
  readonly dir: string;
  readonly blocks: readonly CodeBlock[];
}

function compilerOptions(): ts.CompilerOptions {
  const configFile = path.join(ROOT, 'tsconfig.json');
  const config = ts.readConfigFile(configFile, (file) => ts.sys.readFile(file));
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent({ compilerOptions: config.config.compilerOptions }, ts.sys, ROOT);
  return { ...parsed.options, noEmit: true, noUnusedLocals: false };
}

/** A compiler host that parses every file once, whatever the number of programs (every page's folder is new). */
function cachingHost(options: ts.CompilerOptions): ts.CompilerHost {
  const host = ts.createCompilerHost(options, true);
  const cache = new Map<string, ts.SourceFile | undefined>();
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    if (!cache.has(fileName)) cache.set(fileName, getSourceFile(fileName, languageVersion, onError, shouldCreate));
    return cache.get(fileName);
  };
  return host;
}

const options = compilerOptions();
const host = cachingHost(options);

/** Type-checks each block of a page in a program of its own. */
function check({ page, dir, blocks }: Request): BlockError[] {
  const errors: BlockError[] = [];
  for (const block of blocks) {
    const target = path.join(dir, block.file);
    const program = ts.createProgram({ rootNames: [target], options, host });
    const source = program.getSourceFile(target)!;
    const hidden = block.preamble ? block.preamble.split('\n').length : 0;
    for (const diagnostic of ts.getPreEmitDiagnostics(program, source)) {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
      let where = `${page}:${block.line} (${block.file})`;
      if (diagnostic.file === source && diagnostic.start !== undefined) {
        const { line } = source.getLineAndCharacterOfPosition(diagnostic.start);
        where = line < hidden ? `${page}:${block.line} (${block.file}, preamble line ${line + 1})` : `${page}:${block.line + line - hidden}`;
      } else if (diagnostic.file) {
        where = `${page}:${block.line} (${block.file}, in ${path.relative(dir, diagnostic.file.fileName)})`;
      }
      errors.push({ where, message: `TS${diagnostic.code}: ${message}` });
    }
  }
  return errors;
}

threads.serve(check);
