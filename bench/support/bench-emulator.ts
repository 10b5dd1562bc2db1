import { type ChildProcess, fork } from 'node:child_process';
import type { StartEmulatorOptions } from '../../src/emulator/index.js';

/** An emulator running in a child process, and the arrival times (epoch ms) of the requests it served. */
export interface BenchEmulator {
  url: string;
  /** Arrival times (epoch ms) of source requests since the last call, and the CPU time the emulator used meanwhile. */
  takeArrivals(): Promise<{ arrivals: number[]; cpuMs: number }>;
  close(): Promise<void>;
}

/**
 * Starts the emulator with `options` (JSON-serializable: no hooks) in a child process, answering every
 * source request after `latencyMs`.
 */
export async function startBenchEmulator(
  options: Omit<StartEmulatorOptions, 'hooks'>,
  latencyMs = 0,
): Promise<BenchEmulator> {
  const child = fork(new URL('./emulator-process.ts', import.meta.url), [JSON.stringify(options), String(latencyMs)], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await reply<{ url: string }>(child, 'ready');
  return {
    url: url.url,
    async takeArrivals() {
      const answer = reply<{ arrivals: number[]; cpuMs: number }>(child, 'arrivals');
      child.send({ type: 'arrivals' });
      const { arrivals, cpuMs } = await answer;
      return { arrivals, cpuMs };
    },
    async close() {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.send({ type: 'close' });
      await exited;
    },
  };
}

function reply<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type: string }) => {
      if (message.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message as T);
    };
    const onExit = (code: number | null) =>
      reject(new Error(`the bench emulator exited (${code}) before it answered "${type}"`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}
