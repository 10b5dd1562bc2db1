import { Readable, Writable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import { releaseInterruptibleRun } from '../../src/commands/interruption.js';
import { useLogFormat } from '../../src/log/log-style.js';
import { forgetSecrets } from '../../src/log/redact.js';

/** What a command run in this process gave back: its exit code and what it wrote. */
export interface HostedRun {
  code: number;
  stdout: string;
  stderr: string;
}

let running = false;

/**
 * Runs `loyalty-etl …` in the calling process, as `bin.ts` runs it in its own: bundled by `build-cli.ts` like the
 * subprocesses' `main.js` and loaded by Node itself (not through the test runner's module graph), so the command's
 * module state (log style, registered secrets, the run's stop) is its own and not the test's. What a process gives
 * a command for free is set for the run and put back after it: the environment, the working directory, `argv`,
 * stdout and stderr (captured, neither a terminal), an empty stdin, the log destination; the secrets it registered
 * and the signal handlers of its run are let go. `process.exit` throws instead of ending the test's process.
 * One run at a time: a second one started before the first ends is refused.
 */
export async function runHosted(argv: string[], env: Record<string, string>, cwd: string): Promise<HostedRun> {
  if (running)
    throw new Error('two in-process CLI runs at once: run one of them as a subprocess (runCliProcess, startCli)');
  running = true;
  let stdout = '';
  let stderr = '';
  const put = (to: 'out' | 'err', chunk: unknown) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString();
    if (to === 'out') stdout += text;
    else stderr += text;
  };
  const writer =
    (to: 'out' | 'err') =>
    (chunk: unknown, ...rest: unknown[]): boolean => {
      put(to, chunk);
      (rest.find((r) => typeof r === 'function') as (() => void) | undefined)?.();
      return true;
    };
  const saved = {
    env: { ...process.env },
    cwd: process.cwd(),
    argv: process.argv,
    exit: process.exit,
    exitCode: process.exitCode,
    stdoutWrite: process.stdout.write,
    stderrWrite: process.stderr.write,
    stdoutErrorListeners: process.stdout.listeners('error'),
    stdin: Object.getOwnPropertyDescriptor(process, 'stdin'),
    tty: [process.stdout, process.stderr].map((s) => [s, Object.getOwnPropertyDescriptor(s, 'isTTY')] as const),
  };
  try {
    for (const key of Object.keys(process.env)) delete process.env[key];
    Object.assign(process.env, env);
    process.chdir(cwd);
    process.argv = argv;
    process.stdout.write = writer('out') as typeof process.stdout.write;
    process.stderr.write = writer('err') as typeof process.stderr.write;
    for (const [stream] of saved.tty)
      Object.defineProperty(stream, 'isTTY', { value: undefined, configurable: true, writable: true });
    Object.defineProperty(process, 'stdin', { value: Readable.from([]), configurable: true, writable: true });
    process.exit = ((code?: number) => {
      throw new Error(`process.exit(${code}) in an in-process CLI run`);
    }) as typeof process.exit;
    useLogFormat(
      'json',
      false,
      new Writable({
        write(chunk, _encoding, done) {
          put('err', chunk);
          done();
        },
      }),
    );
    const code = await main(argv);
    return { code, stdout, stderr };
  } finally {
    forgetSecrets();
    releaseInterruptibleRun();
    for (const key of Object.keys(process.env)) delete process.env[key];
    Object.assign(process.env, saved.env);
    process.chdir(saved.cwd);
    process.argv = saved.argv;
    process.exit = saved.exit;
    process.exitCode = saved.exitCode;
    process.stdout.write = saved.stdoutWrite;
    process.stderr.write = saved.stderrWrite;
    for (const listener of process.stdout.listeners('error'))
      if (!saved.stdoutErrorListeners.includes(listener)) process.stdout.off('error', listener as () => void);
    for (const [stream, descriptor] of saved.tty) {
      if (descriptor) Object.defineProperty(stream, 'isTTY', descriptor);
      else delete (stream as { isTTY?: boolean }).isTTY;
    }
    if (saved.stdin) Object.defineProperty(process, 'stdin', saved.stdin);
    running = false;
  }
}
