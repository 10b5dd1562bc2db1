import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUSTOM_FIELD_POOL, type EmulatorReadings, startEmulator, type Emulator } from '../../src/emulator/index.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { truthContents, warehouseContents } from '../helpers/ground-truth.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';

/**
 * A multiple-choice custom field (`Interests`: `multiple` with `options` in its profile) sent in each form a service
 * may send several options in one string. Its options hold the traps: the label `Kids, family`, and `arts;crafts`
 * beside `arts` and `crafts`. Every value loads as exactly its options, one row each, or — where the string reads as
 * more than one list, or as none under the form the jobs file states — NULL with a field reject: never a wrong split.
 */
const TZ = 'Europe/Athens';
const START = '2024-05-01';
const END = '2024-05-08';
const FIELD = 'Interests';
const OPTIONS = CUSTOM_FIELD_POOL.find((f) => f.name === FIELD)!.choices!;
const labelOf = (key: string) => OPTIONS.find((o) => o.key === key)!.value;

/** Which values a case may refuse: none, those naming `arts;crafts` or both `arts` and `crafts`, or every list of two or more. */
type Refused = 'none' | 'ambiguous' | 'several';

const CASES: Array<{
  name: string;
  choiceLists: EmulatorReadings['choiceLists'];
  source: Record<string, string>;
  refused: Refused;
}> = [
  { name: 'keys joined by ","', choiceLists: 'comma', source: {}, refused: 'none' },
  { name: 'a JSON array of keys', choiceLists: 'json', source: {}, refused: 'none' },
  { name: 'labels joined by ", " (one label holds ", ")', choiceLists: 'labels', source: {}, refused: 'none' },
  {
    name: 'keys joined by "|", stated as source.multiple_choice: pipe',
    choiceLists: 'pipe',
    source: { multiple_choice: 'pipe' },
    refused: 'none',
  },
  {
    name: 'keys joined by ";", where arts;crafts also reads as arts and crafts',
    choiceLists: 'semicolon',
    source: {},
    refused: 'ambiguous',
  },
  {
    name: 'keys joined by "|" while the jobs file states source.multiple_choice: comma',
    choiceLists: 'pipe',
    source: { multiple_choice: 'comma' },
    refused: 'several',
  },
];

function mayRefuse(refused: Refused, keys: string[]): boolean {
  if (refused === 'ambiguous')
    return keys.includes('arts;crafts') || (keys.includes('arts') && keys.includes('crafts'));
  return refused === 'several' && keys.length > 1;
}

describe.each(testDestinations)('a multiple-choice custom field, into $name', (target) => {
  const emulators: Emulator[] = [];
  beforeAll(async () => {
    for (const c of CASES)
      emulators.push(
        await startEmulator({
          seed: 39,
          accounts: 60,
          startDate: START,
          endDate: END,
          timezone: TZ,
          port: 0,
          readings: { choiceLists: c.choiceLists },
        }),
      );
  });
  afterAll(() => Promise.all(emulators.map((e) => e.close())));

  it.each(CASES.map((c, n) => ({ ...c, n })))(
    '$name: each value is its options, one row each with its label, or NULL and a field reject',
    async ({ n, source, refused }) => {
      const emulator = emulators[n]!;
      const { config } = await target.fresh();
      const file = emulatorJobs({
        url: emulator.url,
        timezone: TZ,
        firstDay: START,
        destination: config,
        streams: ['accounts'],
        sourceKeys: source,
      });
      const run = await runCli(['run', '--config', file, '--until', END]);
      expect(run.code, run.stderr).toBe(0);

      const held = await withWarehouse(config, async (conn) => {
        const [column] = await conn.all<{ column_name: string }>(
          `SELECT column_name FROM _etl_columns WHERE table_name = 'accounts' AND source_key = $1`,
          [FIELD],
        );
        const wide = await conn.all<{ customer_id: string; value: string | null }>(
          `SELECT customer_id, "${column!.column_name}" AS value FROM accounts`,
        );
        const long = await conn.all<{
          customer_id: string;
          position: number;
          value: string | null;
          label: string | null;
        }>(
          `SELECT customer_id, position, value, label FROM account_custom_fields WHERE field_name = $1 ORDER BY customer_id, position`,
          [FIELD],
        );
        const rejects = await conn.all<{ record_key: string; raw_value: string; error: string }>(
          `SELECT record_key, raw_value, error FROM _etl_field_rejects WHERE stream = 'accounts' AND field = $1`,
          [`customFieldMap.${FIELD}`],
        );
        const tiers = await conn.all<{ value: string; label: string | null }>(
          `SELECT value, label FROM account_custom_fields WHERE field_name = 'loyaltyTier' AND value IS NOT NULL`,
        );
        const typed = await conn.all(`SELECT typed_column FROM _etl_typed_columns WHERE source_key = $1`, [FIELD]);
        return { wide: new Map(wide.map((r) => [r.customer_id, r.value])), long, rejects, tiers, typed };
      });

      const truth = truthContents(emulator, START, END).accounts;
      // a reject is kept per window: a customer's earlier window may hold one while its latest value loaded
      const rejected = new Set(held.rejects.map((r) => r.record_key));
      const refusedIds = new Set<string>();
      let chosen = 0;
      let several = 0;
      for (const [id, account] of truth) {
        const fields = account.custom_fields as Record<string, string | null>;
        const rows = held.long.filter((r) => r.customer_id === id).map((r) => ({ ...r, position: Number(r.position) }));
        if (!Object.hasOwn(fields, FIELD)) {
          expect(rows).toEqual([]);
          continue;
        }
        const value = fields[FIELD]!;
        const empty = [{ customer_id: id, position: 1, value: null, label: null }];
        if (value === null) {
          expect(rows, id).toEqual(empty);
          continue;
        }
        const keys = JSON.parse(value) as string[];
        chosen++;
        if (keys.length > 1) several++;
        if (rows.length === 1 && rows[0]!.value === null) {
          // refused, loudly: kept in _etl_field_rejects, and only where the case says the string cannot be read
          refusedIds.add(id);
          expect(rejected.has(id), `${id} NULL without a field reject`).toBe(true);
          expect(mayRefuse(refused, keys), `${id} ${value} refused`).toBe(true);
          expect(rows, id).toEqual(empty);
          expect(held.wide.get(id), id).toBeNull();
          continue;
        }
        // loaded: exactly the options chosen, in their order, each with its label; `accounts` holds their keys
        expect(rows, id).toEqual(
          keys.map((k, i) => ({ customer_id: id, position: i + 1, value: k, label: labelOf(k) })),
        );
        expect(held.wide.get(id), id).toBe(value);
      }
      expect(chosen).toBeGreaterThan(10);
      expect(several).toBeGreaterThan(3);
      if (refused === 'none') expect(held.rejects).toEqual([]);
      else expect(refusedIds.size).toBeGreaterThan(0);
      for (const r of held.rejects) {
        const served = JSON.parse(r.raw_value) as string;
        if (refused === 'ambiguous') {
          expect(served).toContain('arts');
          expect(r.error).toMatch(/more than one list of options/);
        }
        if (refused === 'several') {
          expect(served).toContain('|');
          expect(r.error).toMatch(/is not options joined by ","/);
        }
      }
      // a single choice keeps its one row and gets its option's label (the emulator serves loyaltyTier's labels)
      expect(held.tiers.length).toBeGreaterThan(10);
      for (const t of held.tiers) expect(t.label).toBe(t.value);
      // a multiple-choice field gets no typed column: its labels are rows
      expect(held.typed).toEqual([]);

      // every other column and field equals the ground truth; a refused value is NULL
      const loaded = (await warehouseContents(config)).accounts;
      for (const id of refusedIds) (truth.get(id)!.custom_fields as Record<string, string | null>)[FIELD] = null;
      expect(loaded).toEqual(truth);

      // loading the same windows again changes nothing
      const again = await runCli(['backfill', '--config', file, '--from', START, '--to', END]);
      expect(again.code, again.stderr).toBe(0);
      expect((await warehouseContents(config)).accounts).toEqual(loaded);
    },
    240_000,
  );
});
