import { afterAll, beforeAll } from 'vitest';
import { startEmulator, type Emulator, type StartEmulatorOptions } from '../../src/emulator/index.js';

/**
 * One emulator for the tests of a suite: started before its first test, closed after its last. Call it in the
 * `describe` body; the handle it returns is filled in by the suite's `beforeAll`, so read it in hooks and tests only
 * (a `beforeAll` declared after it sees it started). Options given as a function are read when the emulator starts.
 */
export function useEmulator(options: StartEmulatorOptions | (() => StartEmulatorOptions)): Emulator {
  const handle = {} as Emulator;
  let started: Emulator | undefined;
  beforeAll(async () => {
    started = await startEmulator(typeof options === 'function' ? options() : options);
    Object.assign(handle, started);
  });
  afterAll(async () => {
    await started?.close();
  });
  return handle;
}
