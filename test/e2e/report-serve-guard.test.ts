import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { launchChromium, openWatched } from '../helpers/browser.js';
import { emulatorJobs, runCli, startCli } from '../helpers/cli.js';
import { duckdbTestDestination, testDestinations } from '../helpers/destinations.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'UTC';
/** A rejected record's payload, with the customer data the page must not carry unless asked. */
const PAYLOAD = JSON.stringify({ customerId: 'C-9', email: 'maria.k@example.com', phone: '306912345678' });

/** Sends a GET with the given `Host` header (fetch does not let a test choose it). */
function getWithHost(
  url: string,
  host: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path: '/', method: 'GET', headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += String(d)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Polls `probe` every 200 ms until it gives a value (up to 20 s). */
async function waitFor<T>(probe: () => T | undefined): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const value = probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('timed out waiting');
}

const emulator = useEmulator({
  seed: 9,
  accounts: 8,
  startDate: '2024-03-01',
  endDate: '2024-03-03',
  timezone: TZ,
});

/** A warehouse after one run, with one rejected record holding customer data. */
async function warehouseWithReject(target: (typeof testDestinations)[number]) {
  const { config } = await target.fresh();
  const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: '2024-03-02', destination: config });
  expect((await runCli(['run', '--config', file, '--until', '2024-03-03'])).code).toBe(0);
  await withWarehouse(config, (conn) =>
    conn.run(
      `INSERT INTO ${conn.schemaSql}._etl_rejects (job, run_id, stream, window_start, payload, error, rejected_at)
       VALUES ('nightly', 'r-1', 'accounts', CAST('2024-03-02' AS DATE), $1, 'email: not an e-mail address: "maria.k@example.com"', CAST('2024-03-03T01:00:00Z' AS TIMESTAMPTZ))`,
      [PAYLOAD],
    ),
  );
  return { config, file };
}

describe.each(testDestinations)('the status page leaves customer data off unless asked ($name)', (target) => {
  it('report writes the rejects’ reasons without their records; --reject-payloads puts them in', async () => {
    const { file } = await warehouseWithReject(target);
    const page = join(testTempDir('page-'), 'status.html');
    expect((await runCli(['report', '--config', file, '--until', '2024-03-03', '--output', page])).code).toBe(0);
    const plain = readFileSync(page, 'utf8');
    expect(plain).toMatch(/email: not an e-mail address: (&quot;|")…/); // the reason, its value blanked
    expect(plain).not.toContain('maria.k@example.com');
    expect(plain).not.toContain('306912345678');
    expect(plain).toContain('--reject-payloads');
    expect(
      (await runCli(['report', '--config', file, '--until', '2024-03-03', '--output', page, '--reject-payloads'])).code,
    ).toBe(0);
    const full = readFileSync(page, 'utf8');
    expect(full).toContain('maria.k@example.com');
    expect(full).toContain('306912345678');
  });
});

describe('report --serve guards the page it serves', () => {
  it('answers only its own host names, sends the security headers, runs its script under them, and carries no customer data', async () => {
    const { file } = await warehouseWithReject(duckdbTestDestination);
    const page = join(testTempDir('serve-'), 'status.html');
    const server = startCli([
      'report',
      '--config',
      file,
      '--until',
      '2024-03-03',
      '--output',
      page,
      '--serve',
      '--port',
      '0',
      '--allowed-host',
      'reports.internal',
    ]);
    try {
      const url = await waitFor(() => /serving (http:\/\/\S+)/.exec(server.output())?.[1]);
      const port = new URL(url).port;
      // a name of someone else's made to point here (DNS rebinding) is refused
      const foreign = await getWithHost(url, `rebind.attacker.example:${port}`);
      expect(foreign.status).toBe(421);
      expect(foreign.body).not.toContain('loyalty-etl');
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `reports.internal:${port}`, 'reports.internal']) {
        const own = await getWithHost(url, host);
        expect(own.status, host).toBe(200);
        expect(own.headers['x-content-type-options']).toBe('nosniff');
        expect(own.headers['referrer-policy']).toBe('no-referrer');
        expect(own.headers['content-security-policy']).toMatch(/default-src 'none'/);
        expect(own.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
        expect(own.headers['content-security-policy']).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
        expect(own.body).not.toContain('maria.k@example.com');
      }
      // the page's own script still runs under the policy, and nothing is refused by it
      const browser = await launchChromium();
      try {
        const { page: tab, problems } = await openWatched(browser, url);
        expect(await tab.locator('body > div.tip').count()).toBe(1);
        expect(problems).toEqual([]);
      } finally {
        await browser.close();
      }
      expect(server.output()).not.toMatch(/serves the status page beyond this machine/);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect((await server.done).code).toBe(0);
  });

  it('warns when it serves beyond this machine', async () => {
    const { file } = await warehouseWithReject(duckdbTestDestination);
    const page = join(testTempDir('serve-'), 'status.html');
    const server = startCli([
      'report',
      '--config',
      file,
      '--until',
      '2024-03-03',
      '--output',
      page,
      '--serve',
      '--port',
      '0',
      '--host',
      '0.0.0.0',
    ]);
    try {
      await waitFor(() => /serving (http:\/\/\S+)/.exec(server.output())?.[1]);
      // off a terminal the warning is a log line, like every other line on stderr
      expect(server.output()).toMatch(
        /^\{"level":"warn".*"msg":"--host 0\.0\.0\.0 serves the status page beyond this machine: it has no login/m,
      );
      expect(server.output()).not.toMatch(/^warning: /m);
    } finally {
      server.child.kill('SIGTERM');
    }
    await server.done;
  });
});
