import { describe, expect, it } from 'vitest';
import { eventSpoolOf } from '../../src/config/duckdb-files.js';
import { openDestination } from '../../src/load/warehouses.js';
import { EventSpool } from '../../src/webhook/event-spool.js';
import { parseLoyaltyEvent } from '../../src/webhook/loyalty-event.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';

const duckdb = testDestinations.find((d) => d.name === 'duckdb')!;

describe('status with a webhook spool', () => {
  it('counts the events the receiver spooled that no run has ingested yet', async () => {
    const { config } = await duckdb.fresh();
    // the source is never asked by status
    const file = emulatorJobs({
      url: 'http://127.0.0.1:9',
      timezone: 'UTC',
      firstDay: '2024-03-01',
      destination: config,
    });
    await (await openDestination(config)).close();
    const spool = new EventSpool(eventSpoolOf(config)!);
    await spool.prepare();
    for (const accountId of ['c-1', 'c-2']) {
      const event = parseLoyaltyEvent(
        { origin: { trigger: 'LOYALTY_POINT_UPDATED' }, customer: { accountId }, entity: {} },
        'UTC',
      );
      await spool.append({ receivedAt: new Date().toISOString(), receiverId: 'receiver-1', event });
    }
    const json = await runCli(['status', '--config', file, '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as { spooledEvents: number }).spooledEvents).toBe(2);
    const text = await runCli(['status', '--config', file]);
    expect(text.stdout).toMatch(/^webhook spool: 2 events received and not yet in loyalty_events /m);
  });
});
