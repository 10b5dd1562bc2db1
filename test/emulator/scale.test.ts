import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/index.js';
import { call } from './emulator-fixture.js';

describe('scale', () => {
  it('starts with a million customers and serves pages of them', async () => {
    const emulator = await startEmulator({ accounts: 1_000_000, endDate: '2024-06-30' });
    try {
      const day = await call(emulator, '/business-data/accounts?start=2024-06-15&end=2024-06-15&page=3&size=1000');
      expect(day.status).toBe(200);
      expect(day.body.totalCount).toBeGreaterThan(10_000);
      expect(day.body.data).toHaveLength(1000);
      const whole = await call(emulator, '/business-data/accounts?start=2024-04-02&end=2024-06-30&page=1000&size=1000');
      expect(whole.body.totalCount).toBe(1_000_000);
      expect(whole.body.data).toHaveLength(1000);
      const surveys = await call(emulator, '/business-data/surveys?start=2024-06-15&end=2024-06-15&page=1&size=1000');
      expect(surveys.body.data).toHaveLength(1000);
      const last = [...emulator.truth.customers('2024-06-30')].at(-1)!;
      expect(last.customer_id).toBe('C1000000');
      const found = await call(
        emulator,
        `/accounts?${last.phone ? `phone=${last.phone}` : `email=${encodeURIComponent(last.email!)}`}`,
      );
      expect(found.body.profile.accountId).toBe('C1000000');
    } finally {
      await emulator.close();
    }
  }, 60_000);
});
