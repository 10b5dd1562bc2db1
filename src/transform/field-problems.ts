import { canonicalJson } from './keys.js';
import { RecordError } from './record-error.js';
import { parseSourceDate, parseSourceTimestamp } from './timestamps.js';
import { cleanBoolean, cleanDecimal, cleanInteger, cleanKey, cleanText } from './values.js';

/**
 * The rows a normalizer emits under this name are fields loaded as NULL, not rows of a table of the stream: the
 * pipeline stages them into `_etl_field_rejects` (`record_key`, `field`, `raw_value`, `error`).
 */
export const FIELD_REJECTS = '_etl_field_rejects';

/** One row of {@link FIELD_REJECTS}. */
export type FieldRejectRow = { record_key: string; field: string; raw_value: string | null; error: string };

/**
 * Reads the non-key fields of one record so that one bad field never costs its record: a field whose value cannot
 * be read (the reader throws a RecordError) is null, and the problem is kept with the raw value. A record whose key
 * is its content (a survey answer, a posting) learns its key after its fields: it gives it to `rows`.
 *
 * @example
 * const fields = new LenientFields('C1');
 * const value = fields.read('value', raw.value, () => cleanDecimal(raw.value, 'value'));
 * return { vouchers: [{ value }], [FIELD_REJECTS]: fields.rows() };
 */
export class LenientFields {
  private readonly problems: Array<{ field: string; raw: unknown; error: string }> = [];

  constructor(private readonly recordKey = '') {}

  read<T>(field: string, raw: unknown, parse: () => T): T | null {
    try {
      return parse();
    } catch (error) {
      return this.kept(field, raw, error);
    }
  }

  // text, timestamp and date read as `read` does, without a closure per field: they are read for every record
  text(field: string, raw: unknown): string | null {
    try {
      return cleanText(raw, field);
    } catch (error) {
      return this.kept(field, raw, error);
    }
  }

  decimal(field: string, raw: unknown): string | null {
    return this.read(field, raw, () => cleanDecimal(raw, field));
  }

  integer(field: string, raw: unknown): number | null {
    return this.read(field, raw, () => cleanInteger(raw, field));
  }

  boolean(field: string, raw: unknown): 'true' | 'false' | null {
    return this.read(field, raw, () => cleanBoolean(raw, field));
  }

  /** A `YYYY-MM-DD` day. */
  date(field: string, raw: unknown): string | null {
    try {
      const text = cleanText(raw, field);
      return text === null ? null : parseSourceDate(text, field);
    } catch (error) {
      return this.kept(field, raw, error);
    }
  }

  /** An instant, as ISO UTC; a zone-less one is read in `timezone`. */
  timestamp(field: string, raw: unknown, timezone: string): string | null {
    try {
      const text = cleanText(raw, field);
      return text === null ? null : parseSourceTimestamp(text, timezone, field);
    } catch (error) {
      return this.kept(field, raw, error);
    }
  }

  /**
   * An object of named text values (`customFieldMap`, `questAnsMap`) member by member, its names cleaned: a member
   * that is no text is null under its name, and a value that is no object at all is no members. Its names are data,
   * so the members are a list, never a plain object (where `__proto__` would be lost).
   */
  namedTexts(field: string, raw: unknown): Array<readonly [string, string | null]> {
    if (raw === null || raw === undefined) return [];
    if (typeof raw !== 'object' || Array.isArray(raw)) {
      const got = Array.isArray(raw) ? 'an array' : typeof raw;
      this.read(field, raw, () => {
        throw new RecordError(field, `expected an object of named values, got ${got}`);
      });
      return [];
    }
    // JSON.parse makes every member an own property, `__proto__` included: Object.entries lists them all
    return Object.entries(raw).map(([name, value]) => [cleanKey(name), this.text(`${field}.${name}`, value)] as const);
  }

  /** Keeps the problem a field's reader threw (a RecordError; anything else is thrown on): the field is null. */
  private kept(field: string, raw: unknown, error: unknown): null {
    if (!(error instanceof RecordError)) throw error;
    this.problems.push({ field, raw, error: error.message });
    return null;
  }

  /** Whether a field could not be read. */
  get failed(): boolean {
    return this.problems.length > 0;
  }

  /**
   * The fields that could not be read and their raw values, as canonical text: a record keyed by its content takes
   * it into its key, so two records differing only in an unreadable value keep two keys.
   */
  keyPart(): string {
    return canonicalJson(this.problems.map((p) => [p.field, p.raw === undefined ? null : p.raw]));
  }

  /** The fields loaded as NULL, as rows of {@link FIELD_REJECTS}. */
  rows(recordKey = this.recordKey): FieldRejectRow[] {
    return this.problems.map((p) => ({
      record_key: recordKey,
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
