/**
 * `npm run bench [-- <section>…]`: runs the benchmark sections (all, or the ones named), prints a table per
 * section and its verdicts, and writes everything to `bench/results/<time>.json`. Exits 1 when a verdict
 * fails; `bench/results/latest.json` keeps the latest result of each section. Timing belongs here, never in the tests.
 *
 * To add a measurement (end-to-end rows/s against the fetch-only baseline, peak RSS, …), write a
 * `BenchSection` in `sections/` and list it below. `--smoke` runs every section at a tiny scale (CI does, see
 * `support/bench-mode.ts`).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { SMOKE } from './support/bench-mode.js';
import type { BenchSection, SectionResult } from './support/bench-section.js';
import { formatTable } from './support/report-table.js';
import { endToEnd } from './sections/end-to-end.js';
import { hangFault } from './sections/hang-fault.js';
import { memory } from './sections/memory.js';
import { nightlyCost } from './sections/nightly-cost.js';
import { pageThroughput } from './sections/page-throughput.js';
import { publish } from './sections/publish.js';
import { sharedRateLimit } from './sections/shared-rate-limit.js';
import { spanCost } from './sections/span-cost.js';

const SECTIONS: BenchSection[] = [
  endToEnd,
  hangFault,
  memory,
  nightlyCost,
  pageThroughput,
  publish,
  sharedRateLimit,
  spanCost,
];

const asked = process.argv.slice(2).filter((arg) => arg !== '--smoke');
const unknown = asked.filter((name) => !SECTIONS.some((s) => s.name === name));
if (unknown.length > 0) {
  process.stderr.write(
    `bench: unknown section(s) ${unknown.join(', ')} (sections: ${SECTIONS.map((s) => s.name).join(', ')})\n`,
  );
  process.exit(2);
}
const chosen = asked.length === 0 ? SECTIONS : SECTIONS.filter((s) => asked.includes(s.name));
if (SMOKE)
  process.stdout.write(
    'smoke run: every section at a tiny scale; verdicts are printed, not enforced, and no results are written\n',
  );

const startedAt = new Date();
const results: Record<string, SectionResult & { title: string; seconds: number }> = {};
for (const section of chosen) {
  process.stdout.write(`\n== ${section.name}: ${section.title}\n`);
  const started = performance.now();
  const result = await section.run();
  results[section.name] = { title: section.title, seconds: (performance.now() - started) / 1000, ...result };
  process.stdout.write(`${formatTable(result.rows)}\n`);
  for (const note of result.notes ?? []) process.stdout.write(`note: ${note}\n`);
  for (const check of result.checks)
    process.stdout.write(`${check.passed ? 'PASS' : 'FAIL'}  ${check.name}: ${check.detail}\n`);
}
// a smoke run proves the sections run to their end; its figures measure start-up, not the pipeline
if (SMOKE) process.exit(0);

const report = {
  startedAt: startedAt.toISOString(),
  finishedAt: new Date().toISOString(),
  machine: {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryBytes: totalmem(),
    loadAverage: loadavg(),
  },
  sections: results,
};
const dir = join(import.meta.dirname, 'results');
mkdirSync(dir, { recursive: true });
const file = join(dir, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
// latest.json (kept in the repository) holds the latest run of every section, each with its machine and time
const latestFile = join(dir, 'latest.json');
const latest = existsSync(latestFile)
  ? (JSON.parse(readFileSync(latestFile, 'utf8')) as { sections: Record<string, unknown> })
  : { sections: {} };
for (const [name, result] of Object.entries(results))
  latest.sections[name] = { startedAt: report.startedAt, machine: report.machine, ...result };
writeFileSync(latestFile, `${JSON.stringify({ updatedAt: report.finishedAt, sections: latest.sections }, null, 2)}\n`);
process.stdout.write(`\nresults: ${file} (and ${latestFile})\n`);
const failed = Object.values(results)
  .flatMap((r) => r.checks)
  .filter((c) => !c.passed);
process.exit(failed.length > 0 ? 1 : 0);
