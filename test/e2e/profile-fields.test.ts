import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { BAD_PROFILE_FIELD } from '../../src/emulator/model/profiles.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';

const TZ = 'Europe/Athens';
const START = '2024-03-01';
const END = '2024-03-02';
const emulatorOf = (badProfileField: boolean) =>
  startEmulator({ seed: 5, accounts: 20, startDate: START, endDate: END, timezone: TZ, port: 0, badProfileField });

describe.each(testDestinations)('one unreadable member of reference data on $name', (target) => {
  const emulators: Emulator[] = [];
  afterAll(async () => {
    for (const e of emulators) await e.close();
  });
  let served: number;
  beforeAll(async () => {
    const good = await emulatorOf(false);
    emulators.push(good);
    served = 0;
    for (const id of [1, 2]) {
      const profile = (await (await fetch(`${good.url}/accounts/profiles/${id}`)).json()) as {
        profileFields: unknown[];
      };
      served += profile.profileFields.length;
    }
  });

  it('costs that member, NULL and kept in _etl_field_rejects, never the other fields; replay --rejects reads it again; the next refresh replaces it', async () => {
    const bad = await emulatorOf(true);
    emulators.push(bad);
    const { config } = await target.fresh();
    const jobs = (url: string) =>
      emulatorJobs({ url, timezone: TZ, firstDay: START, destination: config, streams: ['accounts'] });

    // one jobs file for the run and the replay: on PostgreSQL the archive is beside it
    const badJobs = jobs(bad.url);
    const first = await runCli(['run', '--config', badJobs, '--until', END]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/fields that could not be read are NULL, see _etl_field_rejects/);
    await withWarehouse(config, async (conn) => {
      const [profiles] = await conn.all<{ n: number }>('SELECT COUNT(*) AS n FROM profiles');
      expect(Number(profiles!.n)).toBe(2);
      const [fields] = await conn.all<{ n: number }>('SELECT COUNT(*) AS n FROM profile_fields');
      expect(Number(fields!.n), 'every field of both profiles').toBe(served);
      const [field] = await conn.all<{ name: string; label: string; required: unknown; multiple: unknown }>(
        'SELECT name, label, required, multiple FROM profile_fields WHERE profile_id = $1 AND field_id = $2',
        [BAD_PROFILE_FIELD.profileId, BAD_PROFILE_FIELD.fieldId],
      );
      expect(field).toEqual({ name: 'city', label: 'City', required: null, multiple: null });
      const rejects = await conn.all<{ record_key: string; field: string; raw_value: string }>(
        `SELECT record_key, field, raw_value FROM _etl_field_rejects WHERE stream = 'profiles' ORDER BY field`,
      );
      const key = `profile ${BAD_PROFILE_FIELD.profileId} field ${BAD_PROFILE_FIELD.fieldId}`;
      expect(rejects).toEqual([
        { record_key: key, field: 'multiple', raw_value: JSON.stringify(BAD_PROFILE_FIELD.multiple) },
        { record_key: key, field: 'required', raw_value: JSON.stringify(BAD_PROFILE_FIELD.required) },
      ]);
    });

    // replay --rejects reads the kept profiles again (a parser fix would read the field): the rejects are the replay's
    const replay = await runCli(['replay', '--config', badJobs, '--from', START, '--to', END, '--rejects']);
    expect(replay.code, replay.stderr).toBe(0);
    await withWarehouse(config, async (conn) => {
      const [run] = await conn.all<{ run_id: string }>(
        `SELECT run_id FROM _etl_runs WHERE command LIKE 'replay%' ORDER BY started_at DESC LIMIT 1`,
      );
      const rejects = await conn.all<{ run_id: string; field: string }>(
        `SELECT run_id, field FROM _etl_field_rejects WHERE stream = 'profiles' ORDER BY field`,
      );
      expect(rejects).toEqual([
        { run_id: run!.run_id, field: 'multiple' },
        { run_id: run!.run_id, field: 'required' },
      ]);
    });

    // the service mends the field: the next refresh reads it, and what could not be read is gone
    const second = await runCli(['run', '--config', jobs(emulators[0]!.url), '--until', END]);
    expect(second.code, second.stderr).toBe(0);
    await withWarehouse(config, async (conn) => {
      const [field] = await conn.all<{ required: unknown }>(
        `SELECT CAST(required AS VARCHAR) AS required FROM profile_fields WHERE profile_id = $1 AND field_id = $2`,
        [BAD_PROFILE_FIELD.profileId, BAD_PROFILE_FIELD.fieldId],
      );
      expect(String(field!.required)).toMatch(/^(false|f)$/);
      const [left] = await conn.all<{ n: number }>(
        `SELECT COUNT(*) AS n FROM _etl_field_rejects WHERE stream = 'profiles'`,
      );
      expect(Number(left!.n)).toBe(0);
    });
  }, 120_000);
});
