import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { emulatorJobs, startCli } from '../helpers/cli.js';
import { duckdbTestDestination } from '../helpers/destinations.js';
import { waitForOutput } from '../helpers/request-gate.js';

describe('publish interrupted by a signal', () => {
  it('ends with one line saying the copy was not published, exit 143', async () => {
    const { config, warehouse } = await duckdbTestDestination.fresh();
    const file = emulatorJobs({
      url: 'http://127.0.0.1:9',
      timezone: 'UTC',
      firstDay: '2024-01-01',
      destination: config,
    });
    // an analyst's session holds the file, so the publish is under way (waiting for it) when the signal comes
    const instance = await DuckDBInstance.create(warehouse, { access_mode: 'READ_ONLY' });
    const conn = await instance.connect();
    try {
      const publish = startCli(['publish', '--config', file], {
        LOYALTY_BUSY_TIMEOUT_S: '60',
        LOYALTY_PII_SALT: 'salt-for-tests',
      });
      await waitForOutput(publish, /waiting for process/);
      publish.child.kill('SIGTERM');
      const result = await publish.done;
      expect(result.code, result.stderr).toBe(143);
      const lines = result.stderr.trim().split('\n');
      expect(lines.filter((l) => l.startsWith('loyalty-etl:'))).toHaveLength(1);
      expect(lines.at(-1)).toBe(
        'loyalty-etl: interrupted by SIGTERM: the copy was not published; readers keep the previous one',
      );
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});
