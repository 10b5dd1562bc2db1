import type { FieldReject } from '../load/destination.js';
import type { Row } from '../load/table-spec.js';
import type { Day } from '../plan/days.js';
import { RecordError } from '../transform/record-error.js';

/** Rows staged per table, each with the occurrence number of its source record and its window. */
export type StagedRowsByTable = Map<string, Array<{ seq: number; windowStart: Day; row: Row }>>;

/**
 * Normalizes a batch of one window's records into rows per table, numbering the records from `seq + 1`; a record
 * the normalizer refuses (a RecordError) is handed back in `invalid`, any other error is thrown.
 */
export function normalizeRecords(
  normalize: (raw: unknown, windowStart: Day) => Record<string, Row[]>,
  records: unknown[],
  windowStart: Day,
  seq: number,
): { rows: StagedRowsByTable; invalid: Array<{ raw: unknown; error: RecordError }> } {
  const rows: StagedRowsByTable = new Map();
  const invalid: Array<{ raw: unknown; error: RecordError }> = [];
  for (const raw of records) {
    seq++;
    try {
      for (const [table, tableRows] of Object.entries(normalize(raw, windowStart))) {
        let list = rows.get(table);
        if (!list) rows.set(table, (list = []));
        for (const row of tableRows) list.push({ seq, windowStart, row });
      }
    } catch (error) {
      if (!(error instanceof RecordError)) throw error;
      invalid.push({ raw, error });
    }
  }
  return { rows, invalid };
}

/** A field reject as a normalizer emits it (a row of `FIELD_REJECTS`), as either warehouse can store it. */
export function fieldReject(windowStart: Day, row: Row): FieldReject {
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    windowStart,
    recordKey: text(row.record_key) ?? '',
    // a field's path may hold a source key (`customFieldMap.<name>`): without NULs, as either warehouse stores it
    field: storableMessage(text(row.field) ?? '').toWellFormed(),
    rawValue: text(row.raw_value),
    error: storableMessage(text(row.error) ?? '').toWellFormed(),
  };
}

/**
 * A reject's message as either warehouse stores it: it may quote a source key (`customFieldMap.<name>: …`), and
 * a NUL in a key, which PostgreSQL text cannot hold, is written as `\u0000`, as the payload's JSON writes it.
 */
export function storableMessage(message: string): string {
  return message.includes('\u0000') ? message.replaceAll('\u0000', '\\u0000') : message;
}

export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return JSON.stringify(String(value));
  }
}
