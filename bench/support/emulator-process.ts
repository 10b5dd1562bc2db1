/**
 * The emulator in a process of its own, so that the client being measured and the emulated source do not
 * share an event loop. Started by {@link startBenchEmulator}: argv[2] holds the emulator's options and
 * argv[3] the latency. Every source request's arrival is recorded before the latency is served, so the
 * arrival times are when requests reached the source, not when they were answered.
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
        arrivals.push(performance.timeOrigin + performance.now());
        if (latencyMs > 0) await sleep(latencyMs, undefined, { signal: request.signal });
        return next(request);
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
