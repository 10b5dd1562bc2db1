import { describe, expect, it } from 'vitest';
import { busyTimeoutOf, eventSpoolOf, publishPathOf } from '../../src/config/duckdb-files.js';
import { parseConfig } from '../../src/config/load-config.js';

const withDestination = (destination: string) => `
source:
  base_url: http://127.0.0.1:8787
destination:
${destination}
jobs:
  nightly:
    first_day: 2024-01-01
`;

describe('the files kept beside a DuckDB warehouse', () => {
  it('publishes beside the warehouse and spools beside it by default; each can be placed, and publishing turned off', () => {
    const defaults = parseConfig(
      withDestination('  type: duckdb\n  path: /data/loyalty.duckdb'),
      'jobs.yaml',
      {},
    ).destination;
    expect([publishPathOf(defaults), eventSpoolOf(defaults), busyTimeoutOf(defaults, {})]).toEqual([
      '/data/loyalty.published.duckdb',
      '/data/loyalty.events',
      300,
    ]);
    const placed = parseConfig(
      withDestination(
        '  type: duckdb\n  path: /data/loyalty.db\n  publish_path: /srv/analysts/loyalty.duckdb\n  event_spool: /var/spool/loyalty\n  busy_timeout_s: 30',
      ),
      'jobs.yaml',
      {},
    ).destination;
    expect([
      publishPathOf(placed),
      eventSpoolOf(placed),
      busyTimeoutOf(placed, {}),
      busyTimeoutOf(placed, { LOYALTY_BUSY_TIMEOUT_S: '0' }),
    ]).toEqual(['/srv/analysts/loyalty.duckdb', '/var/spool/loyalty', 30, 0]);
    const off = parseConfig(
      withDestination('  type: duckdb\n  path: w.db\n  publish_path: false'),
      'jobs.yaml',
      {},
    ).destination;
    expect([publishPathOf(off), eventSpoolOf(off)]).toEqual([undefined, 'w.db.events']);
    // PostgreSQL serves readers itself and takes webhook events directly
    const postgres = parseConfig(
      withDestination('  type: postgres\n  url: postgres://etl@db/wh'),
      'jobs.yaml',
      {},
    ).destination;
    expect([publishPathOf(postgres), eventSpoolOf(postgres)]).toEqual([undefined, undefined]);
  });

  it('refuses a wait that is not a whole number of seconds', () => {
    expect(() => parseConfig(withDestination('  type: duckdb\n  busy_timeout_s: -1'), 'jobs.yaml', {})).toThrow(
      /^jobs\.yaml: destination\.busy_timeout_s: /,
    );
    expect(() =>
      busyTimeoutOf({ type: 'duckdb', path: 'w.duckdb', schema: 'main' }, { LOYALTY_BUSY_TIMEOUT_S: '2m' }),
    ).toThrow('LOYALTY_BUSY_TIMEOUT_S: 2m is not a whole number of seconds from 0 to 86400');
  });
});
