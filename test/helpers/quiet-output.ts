import { Writable } from 'node:stream';
import { afterEach, beforeEach } from 'vitest';
import { useLogFormat } from '../../src/commands/job-session.js';

/**
 * Commands some suites run in their own process (`runCommand`, `backfillCommand`) print their summaries on stdout
 * and their logs on stderr. Both are held for each test and shown only when it fails, so a passing suite prints
 * nothing of the code under test.
 */
let held = '';
const hold = (chunk: unknown): void => {
  held += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString();
};
const original = { stdout: process.stdout.write.bind(process.stdout), stderr: process.stderr.write.bind(process.stderr) };

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

beforeEach(() => {
  held = '';
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    hold(chunk);
    const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }) as typeof process.stdout.write;
  process.stderr.write = process.stdout.write;
});

afterEach((context) => {
  process.stdout.write = original.stdout;
  process.stderr.write = original.stderr;
  if (context.task.result?.state === 'fail' && held) original.stderr(`--- output of the code under test (${context.task.name}) ---\n${held}\n`);
  held = '';
});
