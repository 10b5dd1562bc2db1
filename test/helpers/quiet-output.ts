import { Writable } from 'node:stream';
import { afterEach } from 'vitest';
import { useLogFormat } from '../../src/log/log-style.js';

/**
 * Commands some suites run in their own process (`runCommand`, `backfillCommand`) print their summaries on stdout
 * and their logs on stderr. Both are held from the moment a test file starts, its `beforeAll` hooks included, and
 * shown only with a test that fails (a hook's output with the first test after it), so a passing suite prints
 * nothing of the code under test. The test runner reports through its own channel, not through these streams.
 */
let held = '';
const hold = (chunk: unknown): void => {
  held += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString();
};
// Test files share their worker's process one after another (`isolate: false`): the streams' own writes are the ones
// the first file found, not the holding ones a file before this one put in their place.
const globals = globalThis as {
  quietOutputOriginal?: { stdout: typeof process.stdout.write; stderr: typeof process.stderr.write };
};
const original = (globals.quietOutputOriginal ??= {
  stdout: process.stdout.write.bind(process.stdout),
  stderr: process.stderr.write.bind(process.stderr),
});

useLogFormat(
  'json',
  false,
  new Writable({
    write(chunk, _encoding, done) {
      hold(chunk);
      done();
    },
  }),
);

process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
  hold(chunk);
  const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
  callback?.();
  return true;
}) as typeof process.stdout.write;
process.stderr.write = process.stdout.write;

afterEach((context) => {
  if (context.task.result?.state === 'fail' && held)
    original.stderr(`--- output of the code under test (${context.task.name}) ---\n${held}\n`);
  held = '';
});
