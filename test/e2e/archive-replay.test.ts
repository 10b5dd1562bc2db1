import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { AnswerArchive, readSpan } from '../../src/source/archive/answer-archive.js';
import { EVENTS_JOB } from '../../src/source/archive/event-archive.js';
import { emulatorJobs, runCli, startCli } from '../helpers/cli.js';
import { untilSeen, windowsLoaded } from '../helpers/crash-aims.js';
import { startReceiverCli } from '../helpers/receiver-cli.js';
import { RequestTripwire } from '../helpers/request-tripwire.js';
import { testDestinations } from '../helpers/destinations.js';
import { dumpTables } from '../helpers/table-dump.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';

const TZ = 'Europe/Athens';
const START = '2024-05-01';
const END = '2024-05-06';
const STREAMS = ['accounts', 'surveys', 'loyalty_postings', 'loyalty_status', 'vouchers'];
const SLOW = 240_000;

describe.each(testDestinations)('raw archive and replay on $name', (target) => {
  let emulator: Emulator;
  let requests = 0;
  const tripwire = new RequestTripwire();
  const service = (): Parameters<typeof startEmulator>[0] => ({
    seed: 57,
    accounts: 30,
    startDate: START,
    endDate: END,
    timezone: TZ,
    badRecordRate: 0.03,
    port: 0,
    clock: () => Date.parse('2024-05-07T08:00:00Z'),
    hooks: {
      middleware: [
        tripwire.middleware,
        (request, next) => {
          requests++;
          return next(request);
        },
      ],
    },
  });
  beforeAll(async () => {
    emulator = await startEmulator(service());
  });
  afterAll(async () => emulator?.close());

  /** A warehouse of the target's kind and a jobs file on it, its archive where the test says. */
  async function job(archive?: string): Promise<{ config: DestinationSettings; file: string }> {
    const { config: fresh } = await target.fresh();
    const config = archive ? { ...fresh, archive: { path: archive } } : fresh;
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination: config,
      streams: STREAMS,
      lookbackDays: 1,
    });
    return { config, file };
  }

  it(
    'keeps every answer, and replay rebuilds an equal warehouse from the archive alone, with the service stopped',
    async () => {
      const archive = join(testTempDir('archive-'), 'answers');
      const { config, file } = await job(archive);
      const first = await runCli(['run', '--config', file, '--until', '2024-05-05']);
      expect(first.code, first.stderr).toBe(0);
      // a second night: the look-back loads a window again, and the state streams observe every customer again
      const second = await runCli(['run', '--config', file, '--until', END]);
      expect(second.code, second.stderr).toBe(0);
      const original = await withWarehouse(config, (conn) => dumpTables(conn, config.schema));
      expect(original.get('loyalty_status_history')?.length).toBeGreaterThan(0);
      expect(original.get('_etl_rejects')?.length, 'the emulator serves some bad records').toBeGreaterThan(0);

      const kept = new AnswerArchive(archive);
      const usage = await kept.usage();
      expect(usage.files).toBeGreaterThan(0);
      const status = await runCli(['status', '--config', file]);
      expect(status.stdout).toMatch(
        new RegExp(
          `^raw archive: ${archive.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: [\\d.]+ MB in ${usage.files} span files, spans begun `,
          'm',
        ),
      );
      // every answer a span got is kept, committed: the archive holds as many answers as the service served
      let answers = 0;
      for (const f of await kept.spanFiles('nightly')) {
        const span = (await readSpan(f.file))!;
        expect(span.committed, f.file).toBe(true);
        answers += span.answers.length;
      }
      expect(answers).toBeGreaterThan(0);

      // the warehouse lost, the service gone: a new warehouse on the same archive
      const { config: lost } = await target.fresh();
      const rebuilt = { ...lost, archive: { path: archive } };
      const rebuiltFile = emulatorJobs({
        url: emulator.url,
        timezone: TZ,
        firstDay: START,
        destination: rebuilt,
        streams: STREAMS,
        lookbackDays: 1,
      });
      if (config.type === 'duckdb') rmSync(config.path);
      const before = requests;
      await emulator.close();
      const replay = await runCli(['replay', '--config', rebuiltFile, '--from', START, '--to', END]);
      expect(replay.code, replay.stdout + replay.stderr).toBe(0);
      expect(replay.stdout).toMatch(/no request to the service/);
      expect(requests).toBe(before);
      const again = await withWarehouse(rebuilt, (conn) => dumpTables(conn, rebuilt.schema));
      expect([...again.keys()].sort()).toEqual([...original.keys()].sort());
      const differ = [...original]
        .filter(([table, rows]) => JSON.stringify(again.get(table)) !== JSON.stringify(rows))
        .map(([t]) => t);
      expect(differ, 'tables whose rows differ').toEqual([]);
      for (const [table, rows] of original) expect(again.get(table), table).toEqual(rows);

      // --rejects loads again only the windows holding rejected records, from the archive, and changes nothing else
      const rejected = await withWarehouse(rebuilt, (conn) =>
        conn.all<{ n: number }>(`SELECT COUNT(*) AS n FROM (SELECT DISTINCT stream, window_start FROM _etl_rejects) r`),
      );
      const fix = await runCli(['replay', '--config', rebuiltFile, '--from', START, '--to', END, '--rejects'], {
        LOYALTY_LOG_LEVEL: 'debug',
      });
      expect(fix.code, fix.stdout + fix.stderr).toBe(0);
      const replayed = [...fix.stderr.matchAll(/"msg":"window loaded"/g)].length;
      expect(replayed).toBeGreaterThanOrEqual(Number(rejected[0]!.n));
      expect(fix.stdout).toMatch(/archived span\(s\), \d+ window\(s\) loaded again \(\d+ rows, [1-9]\d* rejected\)/);
      const afterFix = await withWarehouse(rebuilt, (conn) => dumpTables(conn, rebuilt.schema));
      for (const [table, rows] of original) expect(afterFix.get(table), table).toEqual(rows);
      // the first night's state replayed alone: the later night, replayed after it, still holds the current state
      const firstNight = await runCli([
        'replay',
        '--config',
        rebuiltFile,
        '--from',
        START,
        '--to',
        '2024-05-04',
        '--stream',
        'loyalty_status',
      ]);
      expect(firstNight.code, firstNight.stdout + firstNight.stderr).toBe(0);
      const afterPart = await withWarehouse(rebuilt, (conn) => dumpTables(conn, rebuilt.schema));
      // a range the archive holds nothing of is a failure, not an empty success
      const nothing = await runCli(['replay', '--config', rebuiltFile, '--from', '2023-01-01', '--to', '2023-01-31']);
      expect([nothing.code, nothing.stderr]).toEqual([
        1,
        expect.stringMatching(/no archived span of job nightly holds a window of 2023-01-01\.\.2023-01-31/),
      ]);
      for (const [table, rows] of original) expect(afterPart.get(table), table).toEqual(rows);
      expect(requests).toBe(before);
      emulator = await startEmulator(service());
    },
    SLOW,
  );

  it(
    'a kill while answers are archived loses none that was loaded: every window done is in the archive, and a replay after the next run equals it',
    async () => {
      const archive = join(testTempDir('archive-'), 'answers');
      const { config, file } = await job(archive);
      const kept = new AnswerArchive(archive);
      // killed while the loyalty state is asked (the directory, surveys and postings committed), then between commits
      for (const aim of [
        () => tripwire.arm({ path: '/accounts', nth: 20, when: 'held' }),
        (victim: ReturnType<typeof startCli>) => untilSeen(victim, () => windowsLoaded(victim) >= 3),
      ]) {
        const victim = startCli(['backfill', '--config', file, '--from', START, '--to', END], {
          LOYALTY_LOG_LEVEL: 'debug',
        });
        const killed = await Promise.race([
          aim(victim).then(() => victim.child.kill('SIGKILL')),
          victim.done.then(() => false),
        ]);
        const result = await victim.done;
        tripwire.disarm();
        expect(killed && result.signal, result.stderr.slice(-400)).toBe('SIGKILL');
        const done = await withWarehouse(config, (conn) =>
          conn.all<{ stream: string; day: string }>(
            `SELECT stream, CAST(window_start AS VARCHAR) AS day FROM _etl_windows WHERE status = 'done' AND stream <> 'profiles' ORDER BY 1, 2`,
          ),
        );
        expect(done.length).toBeGreaterThan(0);
        const archived = new Set<string>();
        for (const f of await kept.spanFiles('nightly')) {
          const span = await readSpan(f.file); // a file the kill cut reads too
          if (span) for (const w of span.header.windows) archived.add(`${f.stream} ${w.start}`);
        }
        expect(done.map((d) => `${d.stream} ${d.day}`).filter((w) => !archived.has(w))).toEqual([]);
      }
      const finish = await runCli(['backfill', '--config', file, '--from', START, '--to', END]);
      expect(finish.code, finish.stderr).toBe(0);
      const original = await withWarehouse(config, (conn) => dumpTables(conn, config.schema));
      const { config: lost } = await target.fresh();
      const rebuilt = { ...lost, archive: { path: archive } };
      const rebuiltFile = emulatorJobs({
        url: 'http://127.0.0.1:9',
        timezone: TZ,
        firstDay: START,
        destination: rebuilt,
        streams: STREAMS,
        lookbackDays: 1,
      });
      const replay = await runCli(['replay', '--config', rebuiltFile, '--from', START, '--to', END]);
      expect(replay.code, replay.stdout + replay.stderr).toBe(0);
      const again = await withWarehouse(rebuilt, (conn) => dumpTables(conn, rebuilt.schema));
      for (const [table, rows] of original) expect(again.get(table), table).toEqual(rows);
    },
    SLOW,
  );

  it(
    'replay rebuilds loyalty_events from the kept webhook events, with the service stopped: the same rows, numbers and instants, and again on a re-run',
    async () => {
      const archive = join(testTempDir('archive-'), 'answers');
      const { config, file } = await job(archive);
      const secret = 'b'.repeat(40);
      const receiver = await startReceiverCli(['--config', file], { LOYALTY_WEBHOOK_SECRET: secret });
      const sent = [3, 7, 3, 12, 7, 20].map((n, i) => ({
        origin: {
          trigger: i % 2 ? 'LOYALTY_TIER_UPDATED' : 'LOYALTY_POINT_UPDATED',
          source: 'POS',
          country: { iso: 'GR' },
        },
        customer: { accountId: `C${String(n).padStart(6, '0')}`, phone: `30690000${String(n).padStart(4, '0')}` },
        entity: {
          loyaltyTier: { name: i > 2 ? 'Gold' : 'Silver', tierOrder: i > 2 ? 2 : 1 },
          wallets: [{ point: 10.5 * (i + 1) }, { point: '4' }],
          cumulativeCredit: 100 + i,
          pointExpiry: `2025-0${i + 1}-01 00:00:00`,
        },
      }));
      try {
        // the third call is delivered twice: one row, as the receiver stores it once
        for (const body of [...sent, sent[2]]) {
          const res = await fetch(`${receiver.url}/hooks/${secret}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          expect(res.status).toBe(200);
        }
      } finally {
        receiver.child.kill('SIGTERM');
        await receiver.done;
      }
      // a night's run: with DuckDB it takes the spooled events into loyalty_events first
      const night = await runCli(['run', '--config', file, '--until', END]);
      expect(night.code, night.stderr).toBe(0);
      const events = `SELECT event_key, seq, CAST(received_at AS VARCHAR) AS received_at, _run_id FROM loyalty_events ORDER BY seq`;
      const original = await withWarehouse(config, async (conn) => ({
        tables: await dumpTables(conn, config.schema),
        numbered: await conn.all(events),
      }));
      expect(original.tables.get('loyalty_events')).toHaveLength(sent.length);

      // the warehouse lost, the service gone: every stream and the events of the range, from the archive alone
      const { config: lost } = await target.fresh();
      const rebuilt = { ...lost, archive: { path: archive } };
      const rebuiltFile = emulatorJobs({
        url: 'http://127.0.0.1:9',
        timezone: TZ,
        firstDay: START,
        destination: rebuilt,
        streams: STREAMS,
        lookbackDays: 1,
      });
      if (config.type === 'duckdb') rmSync(config.path);
      // the events came today: the range reaches tomorrow in the job's zone, whatever the hour
      const until = new Date(Date.now() + 86_400_000).toLocaleDateString('sv-SE', { timeZone: TZ });
      const replay = await runCli(['replay', '--config', rebuiltFile, '--from', START, '--to', until]);
      expect(replay.code, replay.stdout + replay.stderr).toBe(0);
      expect(replay.stdout).toContain(
        `loyalty_events: ${sent.length} kept webhook event(s) received ${START}..${until}: ${sent.length} inserted, 0 written again, 0 quarantined`,
      );
      const again = await withWarehouse(rebuilt, async (conn) => ({
        tables: await dumpTables(conn, rebuilt.schema),
        numbered: await conn.all(events),
      }));
      expect(again.numbered).toEqual(original.numbered);
      for (const [table, rows] of original.tables) expect(again.tables.get(table), table).toEqual(rows);

      // run again, the events alone: each row made again from its payload (a row an older reading wrote is
      // mended), the same rows, numbers and instants
      await withWarehouse(rebuilt, (conn) =>
        conn.run(`UPDATE loyalty_events SET tier_name = 'as read before', points = NULL WHERE seq = 2`),
      );
      const twice = await runCli([
        'replay',
        '--config',
        rebuiltFile,
        '--from',
        START,
        '--to',
        until,
        '--stream',
        'loyalty_events',
      ]);
      expect(twice.code, twice.stdout + twice.stderr).toBe(0);
      expect(twice.stdout).toContain(
        `${sent.length} kept webhook event(s) received ${START}..${until}: 0 inserted, ${sent.length} written again`,
      );
      const thrice = await withWarehouse(rebuilt, async (conn) => ({
        tables: await dumpTables(conn, rebuilt.schema),
        numbered: await conn.all(events),
      }));
      expect(thrice.numbered).toEqual(original.numbered);
      for (const [table, rows] of original.tables) expect(thrice.tables.get(table), table).toEqual(rows);
      // a range no kept event was received in, for the events alone: a failure, not an empty success
      const none = await runCli([
        'replay',
        '--config',
        rebuiltFile,
        '--from',
        '2023-01-01',
        '--to',
        '2023-01-31',
        '--stream',
        'loyalty_events',
      ]);
      expect([none.code, none.stderr]).toEqual([
        1,
        expect.stringMatching(/no webhook event received 2023-01-01\.\.2023-01-31/),
      ]);
    },
    SLOW,
  );

  it('keeps every webhook event the receiver stores, before it answers', async () => {
    const archive = join(testTempDir('archive-'), 'answers');
    const { file } = await job(archive);
    const secret = 'a'.repeat(40);
    const receiver = await startReceiverCli(['--config', file], { LOYALTY_WEBHOOK_SECRET: secret });
    try {
      const event = { origin: { trigger: 'LOYALTY_POINT_UPDATED' }, customer: { accountId: 'C000003' }, entity: {} };
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${receiver.url}/hooks/${secret}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(event),
        });
        expect(res.status).toBe(200);
      }
      // answered 200: already on disk, before the receiver stops
      const [kept] = await new AnswerArchive(archive).spanFiles(EVENTS_JOB);
      const span = (await readSpan(kept!.file))!;
      expect(span.answers).toHaveLength(2);
      for (const a of span.answers) expect(a.body).toContain('"C000003"');
    } finally {
      receiver.child.kill('SIGTERM');
      await receiver.done;
    }
  });
});
