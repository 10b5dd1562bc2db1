import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitWindows } from '../../src/pipeline/load-span.js';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import {
  accountCustomFieldsTable,
  accountsTable,
  accountWindowsTable,
  withCustomFields,
} from '../../src/streams/accounts.js';
import { surveyAnswersTable, surveyQuestionsTable, surveyResponsesTable } from '../../src/streams/surveys.js';
import { account, loadAccounts } from '../helpers/account-spans.js';
import { testDestinations } from '../helpers/destinations.js';

const HOSTILE_KEYS = [
  'Favourite Store',
  'favourite-store',
  'favourite_store',
  "Robert'); DROP TABLE accounts;--",
  'he said "hi"',
  'Ünïcödé naam',
  '日本語フィールド',
  '⭐ tier',
  'select',
  ' padded ',
  '',
  'x'.repeat(300),
];
const HOSTILE_VALUES = [
  "it's",
  'back\\slash',
  'tab\there',
  'new\nline',
  'cr\rhere',
  '"quoted"',
  'ünï ⭐',
  'v'.repeat(10_000),
  'NULLish',
];

describe.each(testDestinations)('span load into $name', (testDestination) => {
  let destination: Destination;
  beforeEach(async () => {
    destination = await openDestination((await testDestination.fresh()).config);
  });
  afterEach(async () => destination.close());

  it('gives every hostile key its own column and round-trips hostile values exactly', async () => {
    const fields = Object.fromEntries(HOSTILE_KEYS.map((k, i) => [k, HOSTILE_VALUES[i % HOSTILE_VALUES.length]!]));
    await loadAccounts(destination, '2024-01-01', [{ row: account('C1', 'Athens'), fields }]);
    await destination.withConnection(async (conn) => {
      const map = await conn.all<{ column_name: string; source_key: string }>(
        'SELECT column_name, source_key FROM _etl_columns WHERE table_name = $1',
        ['accounts'],
      );
      expect(map.map((m) => m.source_key).sort()).toEqual([...HOSTILE_KEYS].sort());
      expect(new Set(map.map((m) => m.column_name)).size).toBe(HOSTILE_KEYS.length);
      // colliding keys are named in code point order in every warehouse, whatever its collation
      expect(map.find((m) => m.source_key === 'Favourite Store')?.column_name).toBe('cf_favourite_store');
      const [row] = await conn.all<Record<string, string>>('SELECT * FROM accounts');
      for (const m of map) expect(row![m.column_name]).toBe(fields[m.source_key]);
      const long = await conn.all<{ field_name: string; value: string }>(
        'SELECT field_name, value FROM account_custom_fields',
      );
      expect(Object.fromEntries(long.map((r) => [r.field_name, r.value]))).toEqual(fields);
      expect((await conn.all('SELECT * FROM accounts')).length).toBe(1);
    });
  });

  it('loads names and values with lone surrogates, as U+FFFD like any other text column', async () => {
    await loadAccounts(destination, '2024-01-01', [
      { row: account('C1', 'x\uDC00y'), fields: { 'half \uD800': 'a\uDBFFb', whole: '\uD83D\uDE00' } },
    ]);
    await destination.withConnection(async (conn) => {
      const long = await conn.all<{ field_name: string; value: string }>(
        'SELECT field_name, value FROM account_custom_fields ORDER BY value',
      );
      expect(long).toEqual([
        { field_name: 'half \uFFFD', value: 'a\uFFFDb' },
        { field_name: 'whole', value: '\uD83D\uDE00' },
      ]);
      const [row] = await conn.all<Record<string, string>>('SELECT city, cf_whole FROM accounts');
      expect(row).toEqual({ city: 'x\uFFFDy', cf_whole: '\uD83D\uDE00' });
    });
  });

  it('keeps the latest window of a customer whatever the order windows commit in', async () => {
    await loadAccounts(destination, '2024-01-05', [{ row: account('C1', 'new'), fields: { tier: 'gold' } }]);
    await loadAccounts(destination, '2024-01-02', [
      { row: account('C1', 'old'), fields: { tier: 'silver', legacy: 'x' } },
    ]);
    await destination.withConnection(async (conn) => {
      const rows = await conn.all<{ city: string; cf_tier: string; cf_legacy: string | null }>(
        'SELECT city, cf_tier, cf_legacy FROM accounts',
      );
      expect(rows).toEqual([{ city: 'new', cf_tier: 'gold', cf_legacy: null }]);
      expect(await conn.all('SELECT field_name, value FROM account_custom_fields')).toEqual([
        { field_name: 'tier', value: 'gold' },
      ]);
    });
    // a newer version drops a field: its long row goes, its wide column empties
    await loadAccounts(destination, '2024-01-07', [{ row: account('C1', 'newer'), fields: { legacy: 'y' } }]);
    await destination.withConnection(async (conn) => {
      expect(await conn.all('SELECT city, cf_tier, cf_legacy FROM accounts')).toEqual([
        { city: 'newer', cf_tier: null, cf_legacy: 'y' },
      ]);
      expect(await conn.all('SELECT field_name, value FROM account_custom_fields')).toEqual([
        { field_name: 'legacy', value: 'y' },
      ]);
    });
  });

  it('keeps the last occurrence when a record is staged twice in one window', async () => {
    await loadAccounts(destination, '2024-01-01', [
      { row: account('C1', 'first'), fields: { a: '1' } },
      { row: account('C1', 'second'), fields: { b: '2' } },
    ]);
    await destination.withConnection(async (conn) => {
      expect(await conn.all('SELECT city, cf_a, cf_b FROM accounts')).toEqual([
        { city: 'second', cf_a: null, cf_b: '2' },
      ]);
      expect(await conn.all('SELECT field_name FROM account_custom_fields')).toEqual([{ field_name: 'b' }]);
    });
  });

  it('of records seen once and records seen again in a span, loads the latest of each and counts each window its keys', async () => {
    const windows = [
      { start: '2024-01-01', end: '2024-01-01' },
      { start: '2024-01-02', end: '2024-01-02' },
    ];
    const span = await destination.openSpan({
      job: 'j',
      stream: 'accounts',
      runId: 'r',
      windows,
      tables: [accountsTable, accountCustomFieldsTable, accountWindowsTable],
    });
    const staged = (seq: number, windowStart: string, id: string, city: string) => ({
      seq,
      windowStart,
      row: withCustomFields(account(id, city), new Map([['seen', city]])),
    });
    await span.append('accounts', [staged(1, '2024-01-01', 'C1', 'a'), staged(2, '2024-01-01', 'C2', 'b')]);
    await span.append('accounts', [staged(3, '2024-01-01', 'C1', 'c')]);
    await span.append('accounts', [
      staged(4, '2024-01-02', 'C3', 'd'),
      staged(5, '2024-01-02', 'C1', 'e'),
      staged(6, '2024-01-02', 'C4', 'f'),
    ]);
    const counts = await commitWindows(
      span,
      { job: 'j', stream: 'accounts', runId: 'r', firstDay: '2024-01-01' },
      windows,
      new Map([
        ['2024-01-01', 3],
        ['2024-01-02', 3],
      ]),
      2,
    );
    expect(counts.map((c) => [c.window.start, c.loaded])).toEqual([
      ['2024-01-01', 2],
      ['2024-01-02', 3],
    ]);
    await destination.withConnection(async (conn) => {
      expect(await conn.all('SELECT customer_id, city, cf_seen FROM accounts ORDER BY customer_id')).toEqual([
        { customer_id: 'C1', city: 'e', cf_seen: 'e' },
        { customer_id: 'C2', city: 'b', cf_seen: 'b' },
        { customer_id: 'C3', city: 'd', cf_seen: 'd' },
        { customer_id: 'C4', city: 'f', cf_seen: 'f' },
      ]);
      expect(await conn.all('SELECT customer_id, value FROM account_custom_fields ORDER BY customer_id')).toEqual([
        { customer_id: 'C1', value: 'e' },
        { customer_id: 'C2', value: 'b' },
        { customer_id: 'C3', value: 'd' },
        { customer_id: 'C4', value: 'f' },
      ]);
      const windowsOf = await conn.all<{ customer_id: string; w: string }>(
        `SELECT customer_id, CAST("_window_start" AS VARCHAR) AS w FROM _etl_account_windows ORDER BY 1, 2`,
      );
      expect(windowsOf.map((r) => `${r.customer_id} ${r.w}`)).toEqual([
        'C1 2024-01-01',
        'C1 2024-01-02',
        'C2 2024-01-01',
        'C3 2024-01-02',
        'C4 2024-01-02',
      ]);
    });
  });

  it('of survey responses staged once and again in a span (a listing repeating a record), loads each answer once', async () => {
    const windows = [
      { start: '2024-01-01', end: '2024-01-01' },
      { start: '2024-01-02', end: '2024-01-02' },
    ];
    const span = await destination.openSpan({
      job: 'j',
      stream: 'surveys',
      runId: 'r',
      windows,
      tables: [surveyResponsesTable, surveyAnswersTable, surveyQuestionsTable],
    });
    const response = (seq: number, windowStart: string, id: string, answers: Record<string, string>) => ({
      seq,
      windowStart,
      row: {
        response_id: id,
        survey_id: 'S',
        customer_id: `C-${id}`,
        answered_at: `${windowStart}T10:00:00Z`,
        _answers: JSON.stringify(answers),
      },
    });
    await span.append('survey_questions', [
      {
        seq: 1,
        windowStart: '2024-01-01',
        row: { survey_id: 'S', question_code: 'q1', question_text: 'One?', question_order: 1 },
      },
      {
        seq: 2,
        windowStart: '2024-01-01',
        row: { survey_id: 'S', question_code: 'q2', question_text: 'Two?', question_order: 2 },
      },
    ]);
    // R1 twice (its id is the content key of the record, answers included); R2 and R3 once
    await span.append('survey_responses', [
      response(3, '2024-01-01', 'R1', { q1: 'a', q2: 'b' }),
      response(4, '2024-01-01', 'R2', { q1: 'x', q2: 'y' }),
    ]);
    await span.append('survey_responses', [
      response(5, '2024-01-02', 'R1', { q1: 'a', q2: 'b' }),
      response(6, '2024-01-02', 'R3', { q2: 'z' }),
    ]);
    await span.commit(windows, (_conn, merge) => merge());
    await destination.withConnection(async (conn) => {
      expect(
        await conn.all(
          `SELECT response_id, CAST("_window_start" AS VARCHAR) AS w FROM survey_responses ORDER BY response_id`,
        ),
      ).toEqual([
        { response_id: 'R1', w: '2024-01-02' },
        { response_id: 'R2', w: '2024-01-01' },
        { response_id: 'R3', w: '2024-01-02' },
      ]);
      expect(
        await conn.all(
          `SELECT response_id, question_code, answer FROM survey_answers ORDER BY response_id, question_code`,
        ),
      ).toEqual([
        { response_id: 'R1', question_code: 'q1', answer: 'a' },
        { response_id: 'R1', question_code: 'q2', answer: 'b' },
        { response_id: 'R2', question_code: 'q1', answer: 'x' },
        { response_id: 'R2', question_code: 'q2', answer: 'y' },
        { response_id: 'R3', question_code: 'q2', answer: 'z' },
      ]);
    });
  });

  it('commits nothing when the commit fails, and the window can be loaded again', async () => {
    const span = await destination.openSpan({
      job: 'j',
      stream: 'accounts',
      runId: 'r',
      windows: [{ start: '2024-01-01', end: '2024-01-01' }],
      tables: [accountsTable, accountCustomFieldsTable],
    });
    // a row the target refuses (no key) fails the merge after the new pivot column was added
    await span.append('accounts', [
      {
        seq: 1,
        windowStart: '2024-01-01',
        row: withCustomFields({ ...account('C1', 'x'), customer_id: null }, new Map([['brand new', 'v']])),
      },
    ]);
    await expect(
      commitWindows(
        span,
        { job: 'j', stream: 'accounts', runId: 'r', firstDay: '2024-01-01' },
        [{ start: '2024-01-01', end: '2024-01-01' }],
        new Map(),
        0,
      ),
    ).rejects.toThrow();
    await destination.withConnection(async (conn) => {
      expect(await conn.all('SELECT * FROM accounts')).toEqual([]);
      expect(await conn.all('SELECT * FROM _etl_windows')).toEqual([]);
      expect(await conn.all('SELECT * FROM _etl_watermarks')).toEqual([]);
      expect(await conn.all('SELECT * FROM _etl_columns')).toEqual([]);
      const cols = await conn.all<{ column_name: string }>(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'accounts'",
      );
      expect(cols.map((c) => c.column_name)).not.toContain('cf_brand_new');
    });
    await loadAccounts(destination, '2024-01-01', [{ row: account('C1', 'ok'), fields: {} }]);
    await destination.withConnection(async (conn) => {
      expect(await conn.all('SELECT CAST(complete_through AS VARCHAR) AS d FROM _etl_watermarks')).toEqual([
        { d: '2024-01-01' },
      ]);
    });
  });
});
