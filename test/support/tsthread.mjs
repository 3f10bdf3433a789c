/**
 * The entry of a worker thread that runs a TypeScript module of the test suite (see threads.ts):
 * Node cannot start a thread from a `.ts` file, so this registers tsx's loader in the thread and
 * imports the module named in `workerData.entry`.
 */
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
