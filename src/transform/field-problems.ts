import { RecordError } from './record-error.js';

/**
 * The rows a normalizer emits under this name are fields loaded as NULL, not rows of a table of the stream: the
 * pipeline stages them into `_etl_field_rejects` (`record_key`, `field`, `raw_value`, `error`).
 */
export const FIELD_REJECTS = '_etl_field_rejects';

/**
 * Reads the non-key fields of one record so that one bad field never costs its record: a field whose value cannot
 * be read (the reader throws a RecordError) is null, and the problem is kept with the raw value.
 *
 * @example
 * const fields = new LenientFields('C1');
 * const value = fields.read('value', raw.value, () => cleanDecimal(raw.value, 'value'));
 * return { vouchers: [{ value }], [FIELD_REJECTS]: fields.rows() };
 */
export class LenientFields {
  private readonly problems: Array<{ field: string; raw: unknown; error: string }> = [];

  constructor(private readonly recordKey: string) {}

  read<T>(field: string, raw: unknown, parse: () => T): T | null {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof RecordError)) throw error;
      this.problems.push({ field, raw, error: error.message });
      return null;
    }
  }

  /** The fields loaded as NULL, as rows of {@link FIELD_REJECTS}. */
  rows(): Array<{ record_key: string; field: string; raw_value: string | null; error: string }> {
    return this.problems.map((p) => ({
      record_key: this.recordKey,
      field: p.field,
      raw_value: rawJson(p.raw),
      error: p.error,
    }));
  }
}

function rawJson(value: unknown): string | null {
  if (value === undefined) return null;
  try {
    return JSON.stringify(value) ?? null;
  } catch {
    return JSON.stringify(String(value));
  }
}
