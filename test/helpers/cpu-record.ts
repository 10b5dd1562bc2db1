import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';

/**
 * With LOYALTY_TEST_CPU_LOG set, appends one line per test file to that file, to see where
 * the suite's time goes on a loaded machine: the file, its worker's process id, the CPU seconds (user + system) of the
 * worker and of its finished subprocesses (the CLI runs) since the worker started, the same two since the file's
 * first hook, and the file's wall seconds. Read from `/proc/self/stat`.
 */
const log = process.env.LOYALTY_TEST_CPU_LOG;

/** [own, children's] CPU seconds of this process. */
function cpuSeconds(): [number, number] {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // after the command's closing parenthesis the fields start at the third (state): utime is the 14th field
  const [user, system, childUser, childSystem] = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .slice(11, 15)
    .map((ticks) => Number(ticks) / 100);
  return [user! + system!, childUser! + childSystem!];
}

if (log) {
  let start: [number, number] = [0, 0];
  let startWall = 0;
  beforeAll(() => {
    start = cpuSeconds();
    startWall = Date.now();
  });
  afterAll(() => {
    const [own, children] = cpuSeconds();
    const file = (expect.getState().testPath ?? 'unknown').replace(`${process.cwd()}/`, '');
    const line = [
      file,
      process.pid,
      own,
      children,
      own - start[0],
      children - start[1],
      (Date.now() - startWall) / 1000,
    ];
    appendFileSync(log, `${line.map((v) => (typeof v === 'number' ? Number(v.toFixed(2)) : v)).join('\t')}\n`);
  });
}
