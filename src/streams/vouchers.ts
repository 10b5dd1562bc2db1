import { z } from 'zod';
import { UNLISTED_COLUMN, type Row, type TableSpec } from '../load/table-spec.js';
import { FIELD_REJECTS, LenientFields } from '../transform/field-problems.js';
import { RecordError } from '../transform/record-error.js';
import { parseSourceDate, parseSourceTimestamp } from '../transform/timestamps.js';
import { UNLISTED, unlistedJson, unlistedMembers } from '../transform/unlisted.js';
import { cleanBoolean, cleanDecimal, cleanText } from '../transform/values.js';
import { customerObservationsTable, customerStateStream } from './customer-state-stream.js';
import type { NormalizedRecord } from './stream.js';
import { zodProblem } from './zod-problem.js';

const text = z.union([z.string(), z.number(), z.null()]).optional();

/** The members of a voucher the spec lists. */
export const VOUCHER_MEMBERS: ReadonlySet<string> = new Set([
  'title',
  'icon',
  'code',
  'value',
  'valueType',
  'expires',
  'enabled',
  'status',
  'redeemed',
  'redeemedBranch',
]);

/**
 * One element of `GET /accounts/vouchers/get`: an object with its key, `code`. The other members are read one by
 * one, leniently (see `voucherRows`).
 */
const voucherSchema = z.looseObject({ code: text });
/**
 * One row per customer and voucher code ever listed. The customers asked replace what they list; a voucher no
 * longer in its customer's list keeps its row, with `gone_at` set to the observation that missed it.
 */
export const vouchersTable: TableSpec = {
  name: 'vouchers',
  key: ['customer_id', 'code'],
  merge: {
    kind: 'customer-listing',
    askedIn: customerObservationsTable.name,
    firstSeen: 'first_seen_at',
    lastSeen: 'last_seen_at',
    gone: 'gone_at',
  },
  columns: [
    { name: 'customer_id', type: 'text' },
    { name: 'code', type: 'text' },
    { name: 'title', type: 'text' },
    { name: 'icon', type: 'text' },
    { name: 'value', type: 'decimal' },
    { name: 'value_type', type: 'text' },
    { name: 'expires_on', type: 'date' },
    { name: 'enabled', type: 'boolean' },
    { name: 'status', type: 'text' },
    { name: 'redeemed_at', type: 'timestamptz' },
    { name: 'redeemed_branch', type: 'text' },
    { name: 'first_seen_at', type: 'timestamptz' },
    { name: 'last_seen_at', type: 'timestamptz' },
    { name: 'gone_at', type: 'timestamptz' },
    UNLISTED_COLUMN,
  ],
  recordType: 'voucher',
  // a version holds the voucher as served; when it was first, last and no longer seen is what the versions say
  history: {
    table: 'vouchers_history',
    observations: '_etl_vouchers_observations',
    observedAt: 'observed_at',
    exclude: ['first_seen_at', 'last_seen_at', 'gone_at'],
    scope: {
      columns: ['customer_id'],
      observedIn: customerObservationsTable.name,
      observations: '_etl_vouchers_asked',
    },
  },
};

/**
 * A customer's voucher list as rows, one per code. A voucher without a code, or a code listed twice, make the whole
 * list a reject: a partial list would mark the vouchers left out as gone. Any other field that cannot be read
 * loads as NULL and is kept in `_etl_field_rejects`: one bad field never costs the voucher, nor the list.
 */
export function voucherRows(
  customerId: string,
  answer: unknown,
  observedAt: string,
  timezone: string,
): NormalizedRecord {
  const parsed = z.array(voucherSchema).safeParse(answer);
  if (!parsed.success) throw new RecordError('', zodProblem(parsed.error).replace(/^record:/, 'vouchers:'));
  const seen = new Set<string>();
  const served = answer as unknown[];
  const problems: Row[] = [];
  const rows = parsed.data.map((v, i) => {
    const code = cleanText(v.code, `${i}.code`);
    if (code === null) throw new RecordError(`${i}.code`, 'is missing');
    if (seen.has(code)) throw new RecordError(`${i}.code`, `voucher ${code} is listed twice`);
    seen.add(code);
    const fields = new LenientFields(`${customerId} ${code}`);
    const member = v as Record<string, unknown>;
    const read = <T>(name: string, parse: (value: unknown, field: string) => T) =>
      fields.read(name, member[name], () => parse(member[name], name));
    const row = {
      customer_id: customerId,
      code,
      title: read('title', cleanText),
      icon: read('icon', cleanText),
      value: read('value', cleanDecimal),
      value_type: read('valueType', cleanText),
      expires_on: read('expires', (value, field) => {
        const text = cleanText(value, field);
        return text === null ? null : parseSourceDate(text, field);
      }),
      enabled: read('enabled', cleanBoolean),
      status: read('status', cleanText),
      redeemed_at: read('redeemed', (value, field) => {
        const text = cleanText(value, field);
        return text === null ? null : parseSourceTimestamp(text, timezone, field);
      }),
      redeemed_branch: read('redeemedBranch', cleanText),
      first_seen_at: observedAt,
      last_seen_at: observedAt,
      gone_at: null,
      [UNLISTED]: unlistedJson(unlistedMembers(served[i], VOUCHER_MEMBERS)),
    };
    problems.push(...fields.rows());
    return row;
  });
  return problems.length > 0 ? { vouchers: rows, [FIELD_REJECTS]: problems } : { vouchers: rows };
}

/** The vouchers stream: each selected customer's `GET /accounts/vouchers/get`, kept per code with when it was seen. */
export const vouchersStream = customerStateStream({
  name: 'vouchers',
  what: 'vouchers',
  tables: [vouchersTable],
  ask: (api, customer) => api.vouchersOf(customer),
  rows: voucherRows,
});
