import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { CUSTOM_FIELD_NAMES, type Emulator } from '../../src/emulator/index.js';
import { FIRST_DAY, LAST_DAY, ZONE, allPages, call, readTimestamp, start } from './emulator-fixture.js';

describe('accounts export', () => {
  let emulator: Emulator;
  let everything: any[];
  beforeAll(async () => {
    emulator = await start();
    everything = (await allPages(emulator, 'accounts', FIRST_DAY, LAST_DAY, 1000)).records;
  });
  afterAll(() => emulator.close());

  it('pages cover exactly totalCount records, each customer once per window', async () => {
    const { totalCount, records } = await allPages(emulator, 'accounts', '2024-09-01', '2024-09-20', 37);
    expect(totalCount).toBeGreaterThan(37 * 2);
    expect(records).toHaveLength(totalCount);
    expect(new Set(records.map((r) => r.customerId)).size).toBe(totalCount);
  });

  it('the whole range holds every customer exactly once', () => {
    expect(everything).toHaveLength(300);
    expect(new Set(everything.map((r) => r.customerId)).size).toBe(300);
  });

  it('answers a page past the end with no data and the true totalCount', async () => {
    const { body } = await call(emulator, `/business-data/accounts?start=${FIRST_DAY}&end=${LAST_DAY}&page=99&size=10`);
    expect(body).toEqual({ pageNumber: 99, pageSize: 10, totalCount: 300, data: [] });
  });

  it('answers an empty window outside the data range', async () => {
    const { body } = await call(emulator, '/business-data/accounts?start=2020-01-01&end=2020-01-31&page=1&size=10');
    expect(body).toEqual({ pageNumber: 1, pageSize: 10, totalCount: 0, data: [] });
  });

  it('orders a window by change time, and profileSet is the change shown', async () => {
    const { records } = await allPages(emulator, 'accounts', '2024-10-20', '2024-10-31', 100);
    const times = records.map((r) => readTimestamp(r.profileSet)!);
    expect(times).toEqual([...times].sort());
    for (const time of times) {
      const day = DateTime.fromISO(time, { zone: ZONE }).toISODate()!;
      expect(day >= '2024-10-20' && day <= '2024-10-31').toBe(true);
    }
  });

  it('serves a modified customer again in a later window, and truth keeps the later version', async () => {
    const early = (await allPages(emulator, 'accounts', FIRST_DAY, '2024-09-10', 1000)).records;
    const late = (await allPages(emulator, 'accounts', '2024-09-11', LAST_DAY, 1000)).records;
    const again = early.filter((r) => late.some((l) => l.customerId === r.customerId));
    expect(again.length).toBeGreaterThan(20);
    for (const first of again) {
      const second = late.find((l) => l.customerId === first.customerId);
      expect(readTimestamp(second.profileSet)! > readTimestamp(first.profileSet)!).toBe(true);
    }
    const truth = new Map([...emulator.truth.accounts(FIRST_DAY, LAST_DAY)].map((a) => [a.customer_id, a]));
    for (const first of again) {
      const second = late.find((l) => l.customerId === first.customerId);
      expect(truth.get(first.customerId)!.profile_set_at).toBe(readTimestamp(second.profileSet));
    }
    // Versions differ beyond profileSet somewhere: a city, a language or the custom fields.
    const changed = again.filter((first) => {
      const second = late.find((l) => l.customerId === first.customerId);
      return (
        first.city !== second.city ||
        first.language !== second.language ||
        JSON.stringify(first.customFieldMap) !== JSON.stringify(second.customFieldMap)
      );
    });
    expect(changed.length).toBeGreaterThan(again.length / 3);
  });

  it('writes missing values as null, "NULL" and ""', () => {
    const values = everything.flatMap((r) => [
      r.first,
      r.last,
      r.birthdate,
      r.source,
      r.country,
      r.nationality,
      r.gender,
      r.city,
      r.language,
      r.phone,
      r.email,
    ]);
    expect(values).toContain(null);
    expect(values).toContain('NULL');
    expect(values).toContain('');
    const custom = everything.flatMap((r) => Object.values(r.customFieldMap));
    expect(custom).toContain(null);
    expect(custom).toContain('NULL');
    expect(custom).toContain('');
  });

  it('writes timestamps zone-less and with a UTC label', () => {
    const stamps = everything
      .flatMap((r) => [r.profileSet, r.customerSince, r.memberSince])
      .filter((s) => typeof s === 'string' && s.length > 4);
    expect(stamps.some((s) => s.endsWith(' UTC'))).toBe(true);
    expect(stamps.some((s) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(s))).toBe(true);
  });

  it('never serves a zone-less time that names two instants', () => {
    for (const r of everything) {
      for (const stamp of [r.profileSet, r.customerSince, r.memberSince]) {
        if (typeof stamp !== 'string' || !/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(stamp)) continue;
        const local = DateTime.fromFormat(stamp, 'yyyy-MM-dd HH:mm:ss', { zone: ZONE });
        // The same wall time one hour apart in UTC would be the other reading of a repeated hour.
        const offsets = [local.minus({ hours: 1 }), local.plus({ hours: 1 })].map((t) =>
          t.setZone(ZONE).toFormat('yyyy-MM-dd HH:mm:ss'),
        );
        expect(offsets).not.toContain(stamp);
      }
    }
  });

  it('has instants right around clock changes', () => {
    // Athens changes at 01:00 UTC on the last Sundays of March and October.
    const changes: number[] = [];
    for (let year = 2015; year <= 2024; year++) {
      for (const month of [3, 10]) {
        const lastSunday = DateTime.utc(year, month, 31).minus({ days: DateTime.utc(year, month, 31).weekday % 7 });
        changes.push(lastSunday.set({ hour: 1 }).toMillis());
      }
    }
    const near = [...emulator.truth.accounts(FIRST_DAY, LAST_DAY)].filter(
      (a) => a.customer_since !== null && changes.some((c) => Math.abs(Date.parse(a.customer_since!) - c) <= 3_600_000),
    );
    expect(near.length).toBeGreaterThan(3);
  });

  it('has e-mail-only and phone-only customers, never one with neither', () => {
    const truth = [...emulator.truth.accounts(FIRST_DAY, LAST_DAY)];
    expect(truth.some((a) => a.phone === null && a.email !== null)).toBe(true);
    expect(truth.some((a) => a.email === null && a.phone !== null)).toBe(true);
    expect(truth.every((a) => a.phone !== null || a.email !== null)).toBe(true);
  });

  it('uses every hostile custom field name of the pool', () => {
    const keys = new Set(everything.flatMap((r) => Object.keys(r.customFieldMap)));
    expect([...keys].sort()).toEqual([...CUSTOM_FIELD_NAMES].sort());
    expect(CUSTOM_FIELD_NAMES).toEqual(
      expect.arrayContaining(['Favourite Store', 'favourite-store', 'favourite_store', 'select', '  padded name  ']),
    );
    expect(CUSTOM_FIELD_NAMES.some((name) => name.length === 300)).toBe(true);
  });

  it('adds and removes custom fields between versions of one customer', async () => {
    const early = (await allPages(emulator, 'accounts', FIRST_DAY, '2024-10-01', 1000)).records;
    const late = new Map(everything.map((r) => [r.customerId, r]));
    const keySets = early
      .map((r) => [
        Object.keys(r.customFieldMap).sort().join('|'),
        Object.keys(late.get(r.customerId).customFieldMap).sort().join('|'),
      ])
      .filter(([a, b]) => a !== b);
    expect(keySets.length).toBeGreaterThan(5);
  });

  it('mixes in malformed records with their own ids when asked to', async () => {
    const noisy = await start({ badRecordRate: 0.2 });
    try {
      const { totalCount, records } = await allPages(noisy, 'accounts', FIRST_DAY, LAST_DAY, 200);
      const valid = records.filter((r) => typeof r.customerId === 'string' && /^C\d{6}$/.test(r.customerId));
      expect(valid).toHaveLength(300);
      expect(totalCount - 300).toBeGreaterThan(20);
      // a malformed record is a reject (no key to load it under) or loads with the field it spoils NULL
      const rejects = [...noisy.truth.rejects('accounts', FIRST_DAY, LAST_DAY)];
      const loaded = [...noisy.truth.accounts(FIRST_DAY, LAST_DAY)].filter((a) => a.customer_id.startsWith('BAD-'));
      const fields = [...noisy.truth.fieldRejects('accounts', FIRST_DAY, LAST_DAY)];
      expect(rejects.length).toBeGreaterThan(0);
      expect(loaded.length).toBeGreaterThan(0);
      expect(rejects.length + loaded.length).toBe(totalCount - 300);
      expect(fields.map((f) => f.customer_id)).toEqual(loaded.map((a) => a.customer_id));
      const malformed = records.filter((r) => !valid.includes(r));
      expect(malformed.filter((r) => typeof r.customerId !== 'string')).toEqual(rejects.map((r) => r.payload));
      expect(new Set(rejects.map((r) => r.reason))).toEqual(
        new Set(['customerId is missing', 'customerId is not a string']),
      );
      for (const f of fields) {
        const served = malformed.find((r) => r.customerId === f.customer_id)!;
        const raw = f.field.split('.').reduce((v: any, name) => v[name], served);
        expect(f.raw_value).toBe(JSON.stringify(raw));
      }
      expect(new Set(fields.map((f) => f.field)).size).toBeGreaterThanOrEqual(3);
    } finally {
      await noisy.close();
    }
  });
});
