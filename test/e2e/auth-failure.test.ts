import { describe, expect, it } from 'vitest';
import type { Middleware } from '../../src/emulator/index.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const START = '2024-05-01';
const END = '2024-05-30';
const STREAMS = ['accounts', 'surveys', 'loyalty_postings'];
const AUTH = '  auth:\n    header: X-Api-Key\n    token: ${LOYALTY_API_TOKEN}\n';

describe.each(testDestinations)('a source that refuses the credentials, into $name', (target) => {
  /** The service refuses every request after this many (the token was revoked while the run went on). */
  let refuseAfter = Number.POSITIVE_INFINITY;
  let served = 0;
  const revoke: Middleware = async (request, next) => {
    if (request.path.startsWith('/_emulator')) return next(request);
    if (++served > refuseAfter)
      return {
        status: 401,
        headers: { 'content-type': 'application/json' },
        body: '{"code":401,"message":"Not authorized"}',
      };
    return next(request);
  };
  const emulator = useEmulator({
    seed: 4,
    accounts: 60,
    startDate: START,
    endDate: END,
    timezone: TZ,
    auth: { header: 'X-Api-Key', value: 'right' },
    hooks: { middleware: [revoke] },
  });

  async function jobsFile() {
    const { config } = await target.fresh();
    return {
      config,
      file: emulatorJobs({
        url: emulator.url,
        timezone: TZ,
        firstDay: START,
        destination: config,
        streams: STREAMS,
        pageSize: 10,
        extraSource: AUTH,
      }),
    };
  }

  const windowsByStatus = (conn: Parameters<Parameters<typeof withWarehouse>[1]>[0]) =>
    conn
      .all<{ status: string; n: number | string }>(
        `SELECT status, COUNT(*) AS n FROM _etl_windows GROUP BY status ORDER BY status`,
      )
      .then((rows) => Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])));

  it('a wrong token: one request, one line, exit 1, no window marked failed', async () => {
    const { config, file } = await jobsFile();
    emulator.stats.reset();
    const result = await runCli(['run', '--config', file, '--until', END], { LOYALTY_API_TOKEN: 'wrong' });
    expect(result.code).toBe(1);
    expect(emulator.stats.requests()).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines.at(-1)).toBe(
      'loyalty-etl: source: profiles: HTTP 401 not authorized (check source.auth and LOYALTY_API_TOKEN)',
    );
    expect(lines.filter((l) => l.startsWith('loyalty-etl:'))).toHaveLength(1);
    expect(result.stderr).not.toMatch(/window failed|could not be refreshed/);
    await withWarehouse(config, async (conn) => {
      expect((await windowsByStatus(conn)).failed).toBeUndefined();
      const [run] = await conn.all<{ status: string; error: string }>(`SELECT status, error FROM _etl_runs`);
      expect(run).toEqual({
        status: 'failed',
        error: 'profiles: HTTP 401 not authorized (check source.auth and LOYALTY_API_TOKEN)',
      });
    });
  });

  it('credentials refused halfway through a backfill: it stops at once, leaves its windows for the next one, which resumes', async () => {
    const { config, file } = await jobsFile();
    served = 0;
    refuseAfter = 40;
    const stopped = await runCli(['backfill', '--config', file, '--from', START, '--to', END, '--concurrency', '4'], {
      LOYALTY_API_TOKEN: 'right',
    });
    expect(stopped.code).toBe(1);
    expect(stopped.stderr.trim().split('\n').at(-1)).toMatch(
      /^loyalty-etl: source: .*: HTTP 401 not authorized \(check source.auth and LOYALTY_API_TOKEN\)$/,
    );
    // what was in flight when the first refusal came (source.concurrency 4), and nothing after
    expect(served).toBeGreaterThan(refuseAfter);
    expect(served).toBeLessThanOrEqual(refuseAfter + 4);
    expect(stopped.stderr).not.toMatch(/window failed/);
    const before = await withWarehouse(config, windowsByStatus);
    expect(before.failed).toBeUndefined();
    expect(before.done).toBeGreaterThan(0);

    refuseAfter = Number.POSITIVE_INFINITY;
    const resumed = await runCli(['backfill', '--config', file, '--from', START, '--to', END, '--concurrency', '4'], {
      LOYALTY_API_TOKEN: 'right',
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(new RegExp(`${before.done} were done before it started`));
    expect(await withWarehouse(config, windowsByStatus)).toEqual({ done: 90 });
  });
});
