import { z } from 'zod';
import { UNLISTED_COLUMN, type TableSpec } from '../load/table-spec.js';
import { RecordError } from '../transform/record-error.js';
import { parseSourceDate, parseSourceTimestamp } from '../transform/timestamps.js';
import { UNLISTED, unlistedJson, unlistedMembers } from '../transform/unlisted.js';
import { cleanBoolean, cleanDecimal, cleanText } from '../transform/values.js';
import { customerObservationsTable, customerStateStream } from './customer-state-stream.js';
import type { NormalizedRecord } from './stream.js';
import { zodProblem } from './zod-problem.js';

const text = z.union([z.string(), z.number(), z.null()]).optional();
const num = z.union([z.number(), z.string(), z.null()]).optional();

/** One element of `GET /accounts/vouchers/get`. */
const voucherSchema = z.looseObject({
  code: text,
  title: text,
  icon: text,
  value: num,
  valueType: text,
  expires: z.string().nullish(),
  enabled: z.union([z.boolean(), z.string(), z.null()]).optional(),
  status: text,
  redeemed: z.string().nullish(),
  redeemedBranch: text,
});

/** The members of a voucher the spec lists. */
export const VOUCHER_MEMBERS: ReadonlySet<string> = new Set(Object.keys(voucherSchema.shape));

/**
 * One row per customer and voucher code ever listed. The customers asked replace what they list; a voucher no
 * longer in its customer's list keeps its row, with `gone_at` set to the observation that missed it.
 */
export const vouchersTable: TableSpec = {
  name: 'vouchers',
  key: ['customer_id', 'code'],
  merge: { kind: 'customer-listing', askedIn: customerObservationsTable.name, firstSeen: 'first_seen_at', lastSeen: 'last_seen_at', gone: 'gone_at' },
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
    scope: { columns: ['customer_id'], observedIn: customerObservationsTable.name, observations: '_etl_vouchers_asked' },
  },
};

/**
 * A customer's voucher list as rows, one per code. A voucher without a code, a code listed twice, or any bad
 * field make the whole list a reject: a partial list would mark the vouchers left out as gone.
 */
export function voucherRows(customerId: string, answer: unknown, observedAt: string, timezone: string): NormalizedRecord {
  const parsed = z.array(voucherSchema).safeParse(answer);
  if (!parsed.success) throw new RecordError('', zodProblem(parsed.error).replace(/^record:/, 'vouchers:'));
  const seen = new Set<string>();
  const served = answer as unknown[];
  const rows = parsed.data.map((v, i) => {
    const code = cleanText(v.code, `${i}.code`);
    if (code === null) throw new RecordError(`${i}.code`, 'is missing');
    if (seen.has(code)) throw new RecordError(`${i}.code`, `voucher ${code} is listed twice`);
    seen.add(code);
    return {
      customer_id: customerId,
      code,
      title: cleanText(v.title, `${i}.title`),
      icon: cleanText(v.icon, `${i}.icon`),
      value: cleanDecimal(v.value, `${i}.value`),
      value_type: cleanText(v.valueType, `${i}.valueType`),
      expires_on: v.expires == null || cleanText(v.expires) === null ? null : parseSourceDate(v.expires, `${i}.expires`),
      enabled: cleanBoolean(v.enabled, `${i}.enabled`),
      status: cleanText(v.status, `${i}.status`),
      redeemed_at: v.redeemed == null || cleanText(v.redeemed) === null ? null : parseSourceTimestamp(v.redeemed, timezone, `${i}.redeemed`),
      redeemed_branch: cleanText(v.redeemedBranch, `${i}.redeemedBranch`),
      first_seen_at: observedAt,
      last_seen_at: observedAt,
      gone_at: null,
      [UNLISTED]: unlistedJson(unlistedMembers(served[i], VOUCHER_MEMBERS)),
    };
  });
  return { vouchers: rows };
}

/** The vouchers stream: each selected customer's `GET /accounts/vouchers/get`, kept per code with when it was seen. */
export const vouchersStream = customerStateStream({
  name: 'vouchers',
  what: 'vouchers',
  tables: [vouchersTable],
  ask: (api, customer) => api.vouchersOf(customer),
  rows: voucherRows,
});
