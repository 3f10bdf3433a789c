/**
 * Log lines of the operator that tests wait for as explicit signals that a piece of work is over,
 * so that they can assert that nothing else happened without waiting "long enough" in real time.
 * One definition for every suite that reads the operator's log.
 */

/**
 * The last line of a processing cycle that patched nothing and waits for nothing (logged at DEBUG,
 * so with `--verbose`): the object is at rest until something else changes it. Its own patches
 * came back before it (the cycle that follows a patch waits for it), so once this is the newest
 * line about an object, the operator does nothing more to that object on its own.
 */
export const AT_REST = 'Handling cycle is finished, waiting for new changes.';

/**
 * The last line about an object once its deletion has been seen (the `DELETED` event): nothing
 * follows it for that object.
 */
export const GONE = 'Deleted, really deleted, and we are notified.';
