import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillCommand } from '../../src/commands/backfill.js';
import { catalogCommand } from '../../src/commands/catalog.js';
import { reportCommand } from '../../src/commands/report.js';
import { publishPathOf } from '../../src/config/duckdb-files.js';
import { statusCommand } from '../../src/commands/status.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { SEASON_QUESTION, SEASON_VISITS_FIELD } from '../../src/emulator/model/setup-season.js';
import { SURVEYS } from '../../src/emulator/model/survey-catalog.js';
import { readPublishedSchema, type PublishedSchema } from '../../src/load/derived/schema-contract.js';
import type { DestinationSettings, SchemaContract } from '../../src/plan/job-plan.js';
import { emulatorJobs } from '../helpers/cli.js';
import { testDestinations, type TestDestination } from '../helpers/destinations.js';
import { captureStdout } from '../helpers/stdout.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';

const TZ = 'Europe/Athens';
const START = '2024-03-01';
const SEASON = '2024-03-06';
/** The nights after the first load: the season's three steps (3 days each) and a quiet night after them. */
const NIGHTS = ['2024-03-06', '2024-03-07', '2024-03-08', '2024-03-09', '2024-03-10', '2024-03-11', '2024-03-12'];
const END = '2024-03-14';
const STREAMS = ['accounts', 'surveys'];
const LABEL = SURVEYS[0]!.questions[0]!.text;

interface ChangeRow {
  object_name: string;
  column_name: string | null;
  change: string;
  from_type: string | null;
  to_type: string | null;
  source_key: string | null;
  value_count: number | bigint | null;
}

/**
 * Every column of `before` that `after` lost or retyped: what the contract says never happens, but for a text column
 * made before its question had any answer, which takes the type of its first answers (`typed`, as recorded).
 */
function broken(before: PublishedSchema, after: PublishedSchema, typed: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const [object, columns] of before)
    for (const [column, type] of columns) {
      const now = after.get(object)?.get(column);
      if (now === type || (type === 'text' && typed.has(`${object}.${column}`))) continue;
      out.push(`${object}.${column}: ${type} → ${now ?? 'gone'}`);
    }
  return out;
}

describe.each(testDestinations)('the schema contract of what analysts read, on $name', (target: TestDestination) => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({
      seed: 41,
      accounts: 240,
      startDate: START,
      endDate: END,
      timezone: TZ,
      setupSeason: SEASON,
      surveysPerDay: 40,
      port: 0,
    });
  });
  afterAll(async () => {
    await emulator.close();
  });

  async function warehouse(contract?: SchemaContract) {
    const { config } = await target.fresh();
    const destination: DestinationSettings = {
      ...config,
      analysts: { personal_data: 'keep', ...(contract ? { schema_contract: contract } : {}) },
    };
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination,
      streams: STREAMS,
      pageSize: 100,
    });
    return { config: destination, file };
  }

  async function night(file: string, from: string, to = from) {
    return captureStdout(() => backfillCommand({ config: file, from, to, concurrency: '2' }));
  }

  it('a season of setup changes, night after night: no column analysts read loses its name or type, every change is recorded and said', async () => {
    const { config, file } = await warehouse();
    const first = await night(file, START, '2024-03-05');
    expect(first.error).toBeUndefined();
    let schema = await withWarehouse(config, (conn) => readPublishedSchema(conn, config.schema!));
    let stableRows = 0;
    const summaries: string[] = [];
    for (const day of NIGHTS) {
      const { out, error } = await night(file, day);
      expect(error, day).toBeUndefined();
      summaries.push(out);
      const [now, rows, typed] = await withWarehouse(config, async (conn) => {
        const [survey] = await conn.all<{ stable_view: string }>(
          'SELECT DISTINCT stable_view FROM surveys WHERE label = $1',
          [LABEL],
        );
        const [n] = await conn.all<{ n: number | bigint }>(`SELECT COUNT(*) AS n FROM "${survey!.stable_view}"`);
        const typed = await conn.all<{ object_name: string; column_name: string }>(
          `SELECT object_name, column_name FROM _etl_schema_changes WHERE change = 'column_typed' AND from_type = 'text'`,
        );
        return [
          await readPublishedSchema(conn, config.schema!),
          Number(n!.n),
          new Set(typed.map((t) => `${t.object_name}.${t.column_name}`)),
        ] as const;
      });
      expect(broken(schema, now, typed), day).toEqual([]);
      // the survey's one view keeps growing, whatever versions of its question set come
      expect(rows, day).toBeGreaterThan(stableRows);
      schema = now;
      stableRows = rows;
    }

    await withWarehouse(config, async (conn) => {
      const changes = await conn.all<ChangeRow>(
        'SELECT object_name, column_name, change, from_type, to_type, source_key, value_count FROM _etl_schema_changes',
      );
      const find = (change: string, key: string) => changes.filter((c) => c.change === change && c.source_key === key);

      // the custom field whose values drifted to free text keeps its typed column, its words NULL there and counted
      const [drift] = find('values_no_longer_fit', SEASON_VISITS_FIELD);
      expect(drift).toMatchObject({ object_name: 'accounts_typed', from_type: 'double', to_type: 'text' });
      expect(Number(drift!.value_count)).toBeGreaterThan(0);
      const [typed] = await conn.all<{ typed_column: string; kind: string }>(
        `SELECT typed_column, kind FROM _etl_typed_columns WHERE source_key = $1`,
        [SEASON_VISITS_FIELD],
      );
      expect(typed).toEqual({ typed_column: drift!.column_name, kind: 'number' });
      expect(
        find('column_added', SEASON_VISITS_FIELD)
          .map((c) => c.object_name)
          .sort(),
      ).toEqual(['accounts', 'accounts_typed', 'accounts_typed'].sort());
      expect(
        find('column_added', 'favouriteStoreApp')
          .map((c) => c.object_name)
          .sort(),
      ).toEqual(['accounts', 'accounts_typed']);

      // one view per survey across its versions, named in surveys; its question of days keeps DATE
      const versions = await conn.all<{ survey_id: string; view_name: string; stable_view: string }>(
        'SELECT survey_id, view_name, stable_view FROM surveys WHERE label = $1',
        [LABEL],
      );
      expect(versions.length).toBe(3);
      const stable = versions[0]!.stable_view;
      expect(new Set(versions.map((v) => v.stable_view))).toEqual(new Set([stable]));
      expect(new Set(versions.map((v) => v.view_name)).size).toBe(3);
      // the view of each new version says, where it was added, which view to read
      const told = await conn.all<{ reason: string }>(
        `SELECT reason FROM _etl_schema_changes WHERE change = 'view_added' AND object_name IN (${versions.map((v) => `'${v.view_name}'`).join(', ')})`,
      );
      expect(
        told.filter((t) => t.reason.startsWith('a new version of the survey') && t.reason.endsWith(stable)).length,
      ).toBe(2);
      const columns = schema.get(stable)!;
      expect(columns.get('q_last_visit')).toBe('date');
      expect(columns.get('q_last_visit_text')).toBe('text');
      expect(columns.get('q_food_quality')).toBe('integer');
      const [answered] = await conn.all<{
        responses: number | bigint;
        view: number | bigint;
        days: number | bigint;
        words: number | bigint;
      }>(
        `SELECT (SELECT SUM(responses) FROM surveys WHERE label = $1) AS responses, COUNT(*) AS view,
                COUNT(q_last_visit) AS days, COUNT(q_last_visit_text) AS words FROM "${stable}"`,
        [LABEL],
      );
      expect(Number(answered!.view)).toBe(Number(answered!.responses));
      expect(Number(answered!.days)).toBeGreaterThan(0);
      expect(Number(answered!.words)).toBeGreaterThan(Number(answered!.days));
      const [question] = find('values_no_longer_fit', SEASON_QUESTION.code).filter((c) => c.object_name === stable);
      expect(question).toMatchObject({ column_name: 'q_last_visit', from_type: 'date', to_type: 'text' });
      expect(find('type_column_added', SEASON_QUESTION.code).map((c) => `${c.object_name}.${c.column_name}`)).toContain(
        `${stable}.q_last_visit_text`,
      );

      // PostgreSQL's analysts read the same view, of the same columns
      if (target.name === 'postgres') {
        const mirrored = await readPublishedSchema(conn, `${config.schema}_analysts`);
        expect([...mirrored.get(stable)!]).toEqual([...columns]);
        const described = await conn.all<{ d: string | null }>(
          `SELECT col_description(c.oid, a.attnum) AS d FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             JOIN pg_attribute a ON a.attrelid = c.oid WHERE n.nspname = $1 AND c.relname = $2 AND a.attname = 'q_last_visit_text'`,
          [`${config.schema}_analysts`, stable],
        );
        expect(described[0]?.d).toContain('read as text');
      }
    });
    // DuckDB's analysts read the published copy: the same view and the record of the changes
    if (config.type === 'duckdb') {
      const instance = await DuckDBInstance.create(publishPathOf(config)!, { access_mode: 'READ_ONLY' });
      const copy = await instance.connect();
      try {
        const read = async (sql: string) => (await copy.runAndReadAll(sql)).getRowObjectsJson();
        const [{ view }] = (await read(
          `SELECT DISTINCT stable_view AS view FROM surveys WHERE stable_view LIKE 'survey_how_%'`,
        )) as [{ view: string }];
        const copied = await read(
          `SELECT column_name, data_type FROM information_schema.columns WHERE table_name = '${view}' AND column_name LIKE 'q_last_visit%' ORDER BY 1`,
        );
        expect(copied).toEqual([
          { column_name: 'q_last_visit', data_type: 'DATE' },
          { column_name: 'q_last_visit_text', data_type: 'VARCHAR' },
        ]);
        expect(Number((await read(`SELECT COUNT(*) AS n FROM _etl_schema_changes`))[0]!.n)).toBeGreaterThan(0);
      } finally {
        copy.closeSync();
        instance.closeSync();
      }
    }

    // said by the runs, by status and in the catalog
    const said = summaries.join('\n');
    expect(said).toMatch(/schema of what analysts read: \d+ changes?/);
    expect(said).toContain(`accounts_typed.${await typedVisits(config)}: values no longer fit (double → text)`);
    const status = await captureStdout(() => statusCommand({ config: file }));
    expect(status.out).toContain('schema changes of what analysts read:');
    expect(status.out).toContain('values_no_longer_fit');
    const page = join(testTempDir('report-'), 'report.html');
    await captureStdout(() => reportCommand({ config: file, output: page, every: '60', port: '0', host: '127.0.0.1' }));
    const html = readFileSync(page, 'utf8');
    expect(html).toContain('Schema changes of what analysts read');
    expect(html).toContain('values_no_longer_fit');
    const catalog = await captureStdout(() => catalogCommand({ config: file, format: 'json' }));
    const tables = (
      JSON.parse(catalog.out) as {
        tables: Array<{ name: string; description: string; columns: Array<{ name: string; description: string }> }>;
      }
    ).tables;
    const view = tables.find((t) => t.name === schemaStable(schema));
    expect(view?.description).toContain('across every version of its question set');
    expect(view?.columns.every((c) => c.description.length > 0)).toBe(true);
    expect(tables.find((t) => t.name === '_etl_schema_changes')?.columns.length).toBe(10);
  });

  it('discard_value adds no column for a new type; freeze refuses the night whose values no longer fit', async () => {
    // the nights of the season's first step, then those whose answers and visits are words
    const discard = await warehouse('discard_value');
    expect((await night(discard.file, START, '2024-03-08')).error).toBeUndefined();
    expect((await night(discard.file, '2024-03-09', '2024-03-11')).error).toBeUndefined();
    await withWarehouse(discard.config, async (conn) => {
      const added = await conn.all(`SELECT 1 FROM _etl_schema_changes WHERE change = 'type_column_added'`);
      expect(added).toEqual([]);
      const said = await conn.all(`SELECT 1 FROM _etl_schema_changes WHERE change = 'values_no_longer_fit'`);
      expect(said.length).toBeGreaterThan(0);
    });

    const freeze = await warehouse('freeze');
    expect((await night(freeze.file, START, '2024-03-08')).error).toBeUndefined();
    const refused = await night(freeze.file, '2024-03-09', '2024-03-11');
    expect(String(refused.error)).toContain('window(s) failed');
    await withWarehouse(freeze.config, async (conn) => {
      const failed = await conn.all<{ error: string }>(`SELECT error FROM _etl_windows WHERE status = 'failed'`);
      expect(failed.some((f) => f.error.includes('schema contract freeze'))).toBe(true);
      expect(await conn.all(`SELECT 1 FROM _etl_schema_changes WHERE change = 'values_no_longer_fit'`)).toEqual([]);
    });
  });
});

/** The typed column of the season's visits field in `config`'s warehouse. */
async function typedVisits(config: DestinationSettings): Promise<string> {
  return withWarehouse(config, async (conn) => {
    const [row] = await conn.all<{ typed_column: string }>(
      'SELECT typed_column FROM _etl_typed_columns WHERE source_key = $1',
      [SEASON_VISITS_FIELD],
    );
    return row!.typed_column;
  });
}

/** The stable view of the season's survey, by its one column the season added. */
function schemaStable(schema: PublishedSchema): string {
  return [...schema].find(([name, columns]) => !name.endsWith('_answers') && columns.has('q_last_visit'))![0];
}
