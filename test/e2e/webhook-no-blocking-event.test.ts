import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventSpoolOf } from '../../src/config/duckdb-files.js';
import { startEmulator } from '../../src/emulator/index.js';
import { openDestination } from '../../src/load/warehouses.js';
import { EventSpool } from '../../src/webhook/event-spool.js';
import { parseLoyaltyEvent } from '../../src/webhook/loyalty-event.js';
import { MAX_BODY_DEPTH } from '../../src/webhook/webhook-calls.js';
import { MAX_EVENT_BYTES } from '../../src/webhook/loyalty-event.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { duckdbTestDestination, testDestinations } from '../helpers/destinations.js';
import { startReceiverCli } from '../helpers/receiver-cli.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'UTC';
const SECRET = '0f4c9e1d2b3a49587766554433221100aa';
/** A webhook body as raw JSON text, so that it can carry escapes JSON.stringify would never write. */
const bodyText = (accountId: string, extra = '') =>
  `{"origin":{"trigger":"LOYALTY_POINT_UPDATED","source":"POS"},"customer":{"accountId":"${accountId}"},"entity":{"cumulativeCredit":5${extra}}}`;

/** Sends a call's headers (and the start of its body) and resolves with the first line of the answer, never sending the rest. */
function headersOnly(url: string, path: string, headers: string, partOfBody = ''): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\n${headers}\r\n${partOfBody}`),
    );
    let answer = '';
    socket.on('data', (d) => {
      answer += String(d);
      if (answer.includes('\r\n')) {
        resolve(answer.split('\r\n')[0]!);
        socket.destroy();
      }
    });
    socket.on('error', reject);
    setTimeout(
      () => (socket.destroy(), reject(new Error(`no answer before the body; got ${JSON.stringify(answer)}`))),
      10_000,
    ).unref();
  });
}

describe.each(testDestinations)('no webhook call blocks a night, into $name', (target) => {
  const emulator = useEmulator({
    seed: 3,
    accounts: 10,
    startDate: '2024-03-01',
    endDate: '2024-03-03',
    timezone: TZ,
  });

  it('takes a body with a lone surrogate as well-formed text, refuses deep nesting and a declared oversized body early, and the next run loads', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: '2024-03-02', destination: config });
    const receiver = await startReceiverCli(['--config', file], { LOYALTY_WEBHOOK_SECRET: SECRET });
    const hook = `${receiver.url}/hooks/${SECRET}`;
    const post = (body: string) =>
      fetch(hook, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    try {
      const lone = await post(bodyText('C-lone\\ud800', ',"note":"\\udc00 alone"'));
      expect(lone.status, await lone.clone().text()).toBe(200);
      expect(((await lone.json()) as { status: string }).status).toBe('stored');

      const deep = await post(bodyText('C-deep', `,"x":${'['.repeat(5000)}${']'.repeat(5000)}`));
      expect(deep.status).toBe(400);
      expect(await deep.json()).toEqual({ error: `body nests deeper than ${MAX_BODY_DEPTH} levels` });
      // nesting up to the limit is an event like any other
      const depth = MAX_BODY_DEPTH - 3; // the body's own three levels hold it
      expect((await post(bodyText('C-nested', `,"x":${'['.repeat(depth)}${']'.repeat(depth)}`))).status).toBe(200);

      // a length over the cap is answered before the body is sent: the sender never has to send a byte of it
      expect(
        await headersOnly(
          receiver.url,
          `/hooks/${SECRET}`,
          'Content-Type: application/json\r\nContent-Length: 70000\r\n',
        ),
      ).toBe('HTTP/1.1 413 Payload Too Large');
      // a body sent without a length is cut off once it passes the cap, without waiting for its end
      const chunk = 'x'.repeat(70_000);
      expect(
        await headersOnly(
          receiver.url,
          `/hooks/${SECRET}`,
          'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n',
          `${chunk.length.toString(16)}\r\n${chunk}\r\n`,
        ),
      ).toBe('HTTP/1.1 413 Payload Too Large');
    } finally {
      receiver.child.kill('SIGTERM');
      await receiver.done;
    }

    const run = await runCli(['run', '--config', file, '--until', '2024-03-03']);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    await withWarehouse(config, async (conn) => {
      const events = await conn.all<{ customer_id: string; note: string }>(
        `SELECT customer_id, CAST(payload AS VARCHAR) AS note FROM loyalty_events ORDER BY seq`,
      );
      expect(events.map((e) => e.customer_id)).toEqual(['C-lone\ufffd', 'C-nested']);
      expect((JSON.parse(events[0]!.note) as { entity: { note: string } }).entity.note).toBe('\ufffd alone');
      const [runs] = await conn.all<{ n: number | string }>(
        `SELECT COUNT(*) AS n FROM _etl_runs WHERE status = 'succeeded'`,
      );
      expect(Number(runs!.n)).toBe(1);
    });
  });

  it('keeps an event the warehouse refuses in quarantine with its reason, counted by status and the page, and the run goes on', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: '2024-03-02', destination: config });
    await (await openDestination(config)).close();
    let refusedKey: string;
    if (config.type === 'duckdb') {
      // what a receiver before this one spooled: a payload DuckDB's JSON refuses (a lone surrogate as an escape)
      const spool = new EventSpool(eventSpoolOf(config)!);
      await spool.prepare();
      const good = parseLoyaltyEvent(JSON.parse(bodyText('C-good')), TZ);
      const bad = { ...parseLoyaltyEvent(JSON.parse(bodyText('C-bad')), TZ), payload: bodyText('C-bad\\ud800') };
      refusedKey = bad.event_key;
      await spool.append({ receivedAt: '2024-03-03T10:00:00.000Z', receiverId: 'old-receiver', event: bad });
      await spool.append({ receivedAt: '2024-03-03T10:00:01.000Z', receiverId: 'old-receiver', event: good });
    } else {
      // a table an operator constrained: PostgreSQL refuses the event's values, whatever the receiver retries
      await withWarehouse(config, (conn) =>
        conn.run(`ALTER TABLE loyalty_events ADD CONSTRAINT no_bad CHECK (customer_id <> 'C-bad')`),
      );
      const receiver = await startReceiverCli(['--config', file], { LOYALTY_WEBHOOK_SECRET: SECRET });
      try {
        const hook = `${receiver.url}/hooks/${SECRET}`;
        const bad = await fetch(hook, { method: 'POST', body: bodyText('C-bad') });
        expect(bad.status).toBe(200);
        const answer = (await bad.json()) as { status: string; eventKey: string };
        expect(answer.status).toBe('quarantined');
        refusedKey = answer.eventKey;
        expect((await fetch(hook, { method: 'POST', body: bodyText('C-good') })).status).toBe(200);
      } finally {
        receiver.child.kill('SIGTERM');
        await receiver.done;
      }
    }

    const run = await runCli(['run', '--config', file, '--until', '2024-03-03', '--report', `${file}.html`]);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    await withWarehouse(config, async (conn) => {
      expect(
        (await conn.all<{ customer_id: string }>(`SELECT customer_id FROM loyalty_events`)).map((r) => r.customer_id),
      ).toEqual(['C-good']);
      const held = await conn.all<{ event_key: string; customer_id: string; reason: string; body: string }>(
        `SELECT event_key, customer_id, reason, body FROM _etl_event_quarantine`,
      );
      expect(held).toHaveLength(1);
      expect(held[0]!.event_key).toBe(refusedKey);
      expect(held[0]!.reason).toMatch(config.type === 'duckdb' ? /surrogate/ : /no_bad/);
      expect(held[0]!.body).toContain('C-bad');
    });
    if (config.type === 'duckdb') expect(await new EventSpool(eventSpoolOf(config)!).pending()).toEqual([]);
    const status = await runCli(['status', '--config', file]);
    expect(status.stdout).toMatch(/^webhook quarantine: 1 event received but not storable in loyalty_events, /m);
    const json = JSON.parse((await runCli(['status', '--config', file, '--json'])).stdout) as {
      quarantinedEvents: { events: number };
    };
    expect(json.quarantinedEvents.events).toBe(1);
    expect(readFileSync(`${file}.html`, 'utf8')).toMatch(/1 webhook event held in quarantine/);
  });
});

describe('a burst of large webhook events (DuckDB)', () => {
  it(
    'is ingested in batches bounded by bytes, events too large for the warehouse kept in quarantine: the next run loads',
    { timeout: 600_000 },
    async () => {
      const emulator = await startEmulator({
        seed: 3,
        accounts: 10,
        startDate: '2024-03-01',
        endDate: '2024-03-03',
        timezone: TZ,
      });
      try {
        const { config } = await duckdbTestDestination.fresh();
        const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: '2024-03-03', destination: config });
        const spool = new EventSpool(eventSpoolOf(config)!);
        await spool.prepare();
        const at = (n: number) => new Date(Date.UTC(2024, 2, 3, 10, 0, 0, n)).toISOString();
        // what a receiver that took bodies of up to 1 MiB spooled: all backslashes, each doubling in the spool's
        // JSON and again in a batch's, so that one batch of them passes V8's longest string
        const huge = '\\\\'.repeat(520_000);
        const tooLarge = 270;
        for (let n = 0; n < tooLarge; n++) {
          const event = parseLoyaltyEvent(JSON.parse(bodyText(`C-huge-${n}`, `,"filler":"${huge}"`)), TZ);
          await spool.append({ receivedAt: at(n), receiverId: 'older-receiver', event });
        }
        // and as many as the receiver takes now, each just under its cap
        const large = '\\\\'.repeat((MAX_EVENT_BYTES - 300) / 2);
        const fitting = 400;
        for (let n = 0; n < fitting; n++) {
          const event = parseLoyaltyEvent(JSON.parse(bodyText(`C-large-${n}`, `,"filler":"${large}"`)), TZ);
          expect(Buffer.byteLength(event.payload)).toBeLessThanOrEqual(MAX_EVENT_BYTES);
          await spool.append({ receivedAt: at(1000 + n), receiverId: 'receiver', event });
        }
        const run = await runCli(['run', '--config', file, '--until', '2024-03-03']);
        expect(run.code, run.stderr.slice(-2000)).toBe(0);
        expect(run.stdout).toContain(
          `webhook events from the spool: ${fitting} stored, 0 already stored, ${tooLarge} not storable (kept in _etl_event_quarantine)`,
        );
        await withWarehouse(config, async (conn) => {
          const [row] = await conn.all<{ n: number | string; seqs: number | string }>(
            `SELECT COUNT(*) AS n, MAX(seq) AS seqs FROM loyalty_events`,
          );
          expect([Number(row!.n), Number(row!.seqs)]).toEqual([fitting, fitting]);
          const held = await conn.all<{ reason: string; body: string | null }>(
            `SELECT reason, body FROM _etl_event_quarantine`,
          );
          expect(held).toHaveLength(tooLarge);
          expect(held[0]!.reason).toMatch(
            /^payload of \d+ bytes, over the 65536 an event may hold; the spool file keeps it whole$/,
          );
          expect(held.every((h) => h.body === null)).toBe(true);
        });
        expect(await spool.pending()).toEqual([]);
        expect(readdirSync(join(spool.dir, 'quarantine'))).toHaveLength(tooLarge);
      } finally {
        await emulator.close();
      }
    },
  );
});
