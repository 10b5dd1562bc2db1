/**
 * The emulator in a process of its own, so that the client being measured and the emulated source do not
 * share an event loop. Started by {@link startBenchEmulator}: argv[2] holds the emulator's options and
 * argv[3] the latency: every source request is answered that long after it arrived (the source's own work
 * included, as a real source's latency includes it). Arrivals are recorded when requests reach the source,
 * not when they are answered.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { startEmulator, type StartEmulatorOptions } from '../../src/emulator/index.js';

type Command = { type: 'arrivals' } | { type: 'close' };

const options = JSON.parse(process.argv[2] ?? '{}') as StartEmulatorOptions;
const latencyMs = Number(process.argv[3] ?? 0);
let arrivals: number[] = [];
let cpu = process.cpuUsage();
const emulator = await startEmulator({
  ...options,
  hooks: {
    middleware: [
      async (request, next) => {
        if (request.path.startsWith('/_emulator/')) return next(request);
        const arrived = performance.now();
        arrivals.push(performance.timeOrigin + arrived);
        // The source answers `latencyMs` after a request arrives: its own work happens within that time.
        const response = await next(request);
        const left = latencyMs - (performance.now() - arrived);
        if (left > 0) await sleep(left, undefined, { signal: request.signal });
        return response;
      },
    ],
  },
});
process.send!({ type: 'ready', url: emulator.url });
process.on('message', (command: Command) => {
  if (command.type === 'arrivals') {
    const used = process.cpuUsage(cpu);
    process.send!({ type: 'arrivals', arrivals, cpuMs: (used.user + used.system) / 1000 });
    arrivals = [];
    cpu = process.cpuUsage();
  } else {
    void emulator.close().then(() => process.exit(0));
  }
});
// The bench that started this process is gone: do not outlive it.
process.on('disconnect', () => process.exit(0));
