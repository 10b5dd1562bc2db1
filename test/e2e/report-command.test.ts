import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backfillCommand } from '../../src/commands/backfill.js';
import { emulatorJobs, runCli, startCli } from '../helpers/cli.js';
import { duckdbTestDestination, postgresTestDestination } from '../helpers/destinations.js';
import { captureStdout } from '../helpers/stdout.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const FROM = '2024-05-01';
const TO = '2024-05-08';

/** The classes of a stream's calendar cells in a written page, in window order. */
function cellClasses(page: string, stream: string): string[] {
  const svg = page.split(`<svg class="cal" data-stream="${stream}"`)[1]?.split('</svg>')[0] ?? '';
  const cells = svg.split('<g class="cells">')[1]?.split('</g>')[0] ?? '';
  return [...cells.matchAll(/<rect [^>]*class="(\w+)"/g)].map((m) => m[1]!);
}

const loaded = (c: string) => /^(d|r\d)$/.test(c);

describe('run --report rewrites the page after every run', () => {
  const emulator = useEmulator({ seed: 5, accounts: 40, startDate: FROM, endDate: TO, timezone: TZ, port: 0 });

  it('after a good night, after a failed one (exit 1), and refuses a path it cannot write before loading anything (exit 2)', async () => {
    const { config } = await duckdbTestDestination.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FROM,
      destination: config,
      streams: ['accounts'],
      sourceKeys: { backoff_base_ms: 5, backoff_max_ms: 20 },
    });
    const page = join(testTempDir('page-'), 'status.html');

    const good = await runCli(['run', '--config', file, '--until', '2024-05-03', '--report', page]);
    expect(good.code).toBe(0);
    const first = readFileSync(page, 'utf8');
    expect(cellClasses(first, 'accounts')).toHaveLength(3);
    expect(cellClasses(first, 'accounts').every(loaded)).toBe(true);
    expect(first).toContain(
      '<div class="banner ok"><strong>Complete</strong>: every stream is loaded through 2024-05-03',
    );

    emulator.faults.set({ downAfter: 0 });
    const bad = await runCli(['run', '--config', file, '--until', '2024-05-05', '--report', page]);
    emulator.faults.set({});
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/"msg":"report written"/);
    const second = readFileSync(page, 'utf8');
    expect(cellClasses(second, 'accounts').map((c) => (loaded(c) ? 'done' : c))).toEqual([
      'done',
      'done',
      'done',
      'f',
      'f',
    ]);
    expect(second).toContain('<div class="banner bad"><strong>Needs attention</strong>');
    expect(readdirSync(dirname(page))).toEqual(['status.html']); // written beside and renamed over: no temp file left

    const nowhere = join(testTempDir('page-'), 'no-such-folder', 'status.html');
    const refused = await runCli(['run', '--config', file, '--until', TO, '--report', nowhere]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^loyalty-etl: --report: .*no-such-folder\/status\.html: folder .* does not exist$/),
    ]);
    expect(existsSync(nowhere)).toBe(false);
    const runs = await withWarehouse(config, (conn) =>
      conn.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM _etl_runs'),
    );
    expect(Number(runs[0]!.n)).toBe(2); // nothing was attempted
  });

  it('report refuses a DuckDB warehouse that does not exist instead of creating an empty one (exit 2)', async () => {
    const { config, warehouse } = await duckdbTestDestination.empty();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: FROM, destination: config });
    const out = join(testTempDir('page-'), 'status.html');
    const result = await runCli(['report', '--config', file, '--output', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^loyalty-etl: warehouse .*warehouse\.duckdb does not exist/);
    expect(existsSync(warehouse)).toBe(false);
    expect(existsSync(out)).toBe(false);
  });
});

describe('report --serve (PostgreSQL)', () => {
  const emulator = useEmulator({ seed: 6, accounts: 30, startDate: FROM, endDate: TO, timezone: TZ, port: 0 });

  it('serves the page, rewrites it from the warehouse while it serves, and stops on SIGTERM', async () => {
    const { config } = await postgresTestDestination.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: FROM, destination: config });
    expect(
      (await captureStdout(() => backfillCommand({ config: file, from: FROM, to: '2024-05-02' }))).error,
    ).toBeUndefined();
    const page = join(testTempDir('serve-'), 'status.html');
    const server = startCli([
      'report',
      '--config',
      file,
      '--until',
      TO,
      '--output',
      page,
      '--serve',
      '--port',
      '0',
      '--every',
      '1',
    ]);
    try {
      const url = await waitFor(() => /serving (http:\/\/\S+)/.exec(server.output())?.[1]);
      const first = await fetch(url);
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const text = await first.text();
      expect(text).toContain('<meta http-equiv="refresh" content="1">');
      expect(cellClasses(text, 'accounts').map((c) => (loaded(c) ? 'done' : c))).toEqual([
        'done',
        'done',
        'm',
        'm',
        'm',
        'm',
        'm',
        'm',
      ]);

      expect(
        (await captureStdout(() => backfillCommand({ config: file, from: '2024-05-03', to: TO }))).error,
      ).toBeUndefined();
      const later = await waitFor(async () => {
        const classes = cellClasses(await (await fetch(url)).text(), 'accounts');
        return classes.every(loaded) ? classes : undefined;
      });
      expect(later).toHaveLength(8);
      expect((await fetch(new URL('/nothing', url))).status).toBe(404);
    } finally {
      server.child.kill('SIGTERM');
    }
    const end = await server.done;
    expect(end.code).toBe(0);
  });
});

/** Polls `probe` every 200 ms until it gives a value (up to 20 s). */
async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('timed out waiting');
}
