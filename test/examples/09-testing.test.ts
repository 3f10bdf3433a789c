/**
 * examples/09-testing (Kopf's 09-testing in TypeScript) comes with its own test, the test a project
 * would write for its operator: examples/09-testing/example.test.ts. It lives beside the example,
 * where its readers look for it; importing it here runs it in `npm test` (its `describe` registers
 * in this file), as scenario A-11.
 */
import '../../examples/09-testing/example.test.js';
