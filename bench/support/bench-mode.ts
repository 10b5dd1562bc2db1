/**
 * `npm run bench -- --smoke` (or `BENCH_SMOKE=1`): every section at a tiny scale, in seconds, so CI notices a
 * change that breaks the bench. Its verdicts are printed but decide nothing (a tiny run measures start-up, not
 * throughput), and its results are not written to `bench/results/`.
 */
export const SMOKE = process.argv.includes('--smoke') || process.env.BENCH_SMOKE === '1';

/** `full` for a measurement, `smoke` for a smoke run. */
export function unlessSmoke<T>(full: T, smoke: T): T {
  return SMOKE ? smoke : full;
}
