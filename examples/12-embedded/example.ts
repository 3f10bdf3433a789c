/**
 * An operator embedded in a program of yours (Kopf's example 12-embedded, in TypeScript): instead
 * of `kopf-gen run`, the program starts the operator with `operator()` beside its own work, waits
 * until it is ready, does that work, and stops it with a stop flag when it is done.
 *
 * - The handlers live in a registry of the program's own, so nothing else imported into the
 *   process adds handlers to this operator.
 * - The program hands its handlers what they need through the operator memo: message templates
 *   (`{name}` is the object's name), as Kopf's original does, and `tell`, how the handlers report
 *   back to the program. Every object gets a copy of the memo, with the same `tell`.
 * - The program's "activity" creates and deletes a few objects with a client of its own
 *   (`connect()`), waiting for the operator to greet each one before deleting it, and for the
 *   deletion to finish. (Kopf's original sleeps a second instead, and runs the operator in a
 *   thread; here it runs on the same event loop as the program.)
 * - Embedded, the operator installs no signal handlers: stopping it is the program's business.
 *
 * Run as a script, it uses the cluster of `KUBECONFIG`; tests call `main()` with a kubeconfig and a
 * `print` of their own.
 */
import { EventEmitter, once } from 'node:events';

import { configure, connect, isEntryPoint, type KubeClient, on, OperatorRegistry, operator } from 'kopf-gen/runtime';

import { KopfExamples } from '../kopfexamples.js';

declare module 'kopf-gen/runtime' {
  interface OperatorMemo {
    /** The greeting of new objects (12-embedded). */
    createTpl?: string;
    /** The farewell of deleted objects (12-embedded). */
    deleteTpl?: string;
    /** How handlers report to the program that embeds the operator (12-embedded). */
    tell?: (line: string) => void;
  }
}

const format = (template: string | undefined, values: Record<string, string>): string =>
  (template ?? '').replace(/\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole);

const registry = new OperatorRegistry();

on.create(KopfExamples, { registry }, function create_fn({ memo, name }) {
  memo.tell?.(format(memo.createTpl, { name }));
});

on.delete(KopfExamples, { registry }, function delete_fn({ memo, name }) {
  memo.tell?.(format(memo.deleteTpl, { name }));
});

export interface MainOptions {
  /** How many objects to create and delete. */
  readonly steps?: number;
  /** Where the program prints (the handlers' messages too); default `console.log`. */
  readonly print?: (line: string) => void;
  /** The cluster's kubeconfig file; default: `KUBECONFIG` and the other usual places. */
  readonly kubeconfig?: string;
}

/** The program: starts the operator, does its own work, stops the operator. */
export async function main({ steps = 3, print = console.log, kubeconfig }: MainOptions = {}): Promise<void> {
  configure({ verbose: true }); // the operator's log lines (on stderr), as with `--verbose`

  // What the handlers tell, printed; and heard by the program, which waits for some of it.
  const heard = new EventEmitter();
  const tell = (line: string): void => {
    print(line);
    heard.emit(line);
  };

  // Start the operator and let it initialise.
  print('Starting the main app.');
  const stop = new AbortController();
  let markReady = (): void => undefined;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const running = operator({
    registry,
    kubeconfig,
    clusterwide: true,
    standalone: true,
    memo: { createTpl: 'Hello, {name}!', deleteTpl: 'Good bye, {name}!', tell },
    readyFlag: markReady,
    stopFlag: stop.signal,
  });
  await Promise.race([ready, running]); // a failed start rejects `running`

  // The operator is active: run the program's activity.
  const client = await connect({ kubeconfig });
  try {
    for (let step = 0; step < steps; step += 1) {
      print(`Do the main app activity here. Step ${step + 1}/${steps}.`);
      const name = `kopf-example-${step}`;
      const greeted = once(heard, `Hello, ${name}!`);
      await client.create(KopfExamples, { metadata: { name, namespace: 'default' }, spec: {} });
      await greeted;
      const farewell = once(heard, `Good bye, ${name}!`);
      const deleting = await client.delete(KopfExamples, name, { namespace: 'default' });
      await farewell;
      if (deleting !== undefined) await gone(client, name, deleting.metadata?.resourceVersion);
    }
  } finally {
    await client.close();
    // Ask the operator to stop gracefully, and wait for it.
    print('Exiting the main app.');
    stop.abort();
    await running;
  }
}

/** Resolves when the object is gone: the operator has removed its finalizer after `delete_fn`. */
async function gone(client: KubeClient, name: string, resourceVersion: string | undefined): Promise<void> {
  let since = resourceVersion; // watch from the deletion on, so that its event cannot be missed
  for (;;) {
    for await (const event of client.watch(KopfExamples, { namespace: 'default', fieldSelector: { 'metadata.name': name }, resourceVersion: since })) {
      if (event.type === 'DELETED') return;
      since = event.object.metadata?.resourceVersion;
    }
  }
}

if (isEntryPoint(import.meta.url)) await main();
