import { ExitCode } from './exit-codes.js';
import { RunStop } from '../pipeline/run-stop.js';
import { RunInterruptedError } from '../pipeline/pipeline-errors.js';

/** Exit code of a process ended by `signal`, as a shell reports it: 128 + the signal's number. */
export function interruptedExitCode(signal: NodeJS.Signals): number {
  return signal === 'SIGTERM' ? ExitCode.terminated : ExitCode.interrupted;
}

let processStop: RunStop | undefined;
let releaseStop = (): void => {};

/**
 * The stop of the process's run, tied to SIGINT and SIGTERM: the first signal stops the run (spans under way are
 * called off, nothing of them commits, the run is recorded `interrupted` and lets go of its lock and claims); a
 * second one ends the process at once, as an uninterrupted signal would.
 */
export function interruptibleRun(): RunStop {
  if (processStop) return processStop;
  const stop = (processStop = new RunStop());
  const onSignal = (signal: NodeJS.Signals) => {
    if (stop.reason instanceof RunInterruptedError) {
      process.stderr.write(`loyalty-etl: ${signal} again: stopped at once\n`);
      process.exit(interruptedExitCode(signal));
    }
    stop.stop(new RunInterruptedError(signal));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  releaseStop = () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    processStop = undefined;
  };
  return stop;
}

/**
 * Lets go of the process's stop and its signal handlers, for a program that runs several commands in its own
 * process (the test suite): a stop that ended one command (refused credentials) must not stop the next one.
 */
export function releaseInterruptibleRun(): void {
  releaseStop();
  releaseStop = () => {};
}
