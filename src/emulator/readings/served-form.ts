import { servedFieldValue } from '../model/custom-field-pool.js';
import type { ZoneClock } from '../model/zone-clock.js';
import type { ResolvedReadings } from './readings.js';
import { type UnlistedRecordType, unlistedMembers } from './unlisted-fields.js';
import { ZoneLabels } from './zone-labels.js';

type Json = Record<string, unknown>;

/**
 * How valid records are served under the readings that change a record's form: unlisted members added,
 * the samples' field names, other zone labels, scalars as strings (in that order, so added numbers are
 * strings too). With the default readings every method returns its argument untouched. Malformed records
 * are never passed here: they are served as they are, and the ground truth's rejects stay exact.
 */
export class ServedForm {
  /** Whether any record changes form; when false, callers may skip the methods altogether. */
  readonly active: boolean;
  private readonly labels: ZoneLabels;

  constructor(
    private readonly readings: ResolvedReadings,
    clock: ZoneClock,
  ) {
    this.labels = new ZoneLabels(readings.zoneLabels, clock);
    this.active =
      readings.unlistedFields ||
      readings.fieldNames === 'sample' ||
      readings.zoneLabels !== 'utc' ||
      readings.scalars === 'strings' ||
      readings.choiceLists !== 'comma' ||
      readings.missingText !== 'NULL';
  }

  /**
   * A record of the accounts export (its timestamps `profileSet`, `customerSince`, `memberSince`, and its
   * multiple-choice fields, served from `fields`, their canonical values).
   */
  account(record: Json, fields: Readonly<Record<string, string | null>> = {}): Json {
    if (!this.active) return record;
    let out = this.withUnlisted(this.choiceLists(record, fields), 'account', String(record.customerId));
    out = {
      ...out,
      profileSet: this.labels.relabel(out.profileSet),
      customerSince: this.labels.relabel(out.customerSince),
      memberSince: this.labels.relabel(out.memberSince),
    };
    return this.scalars(this.sampleNames(this.respelled(out, String(record.customerId))));
  }

  /** A `data[]` element of the surveys export: each answer's `date`, name and members. */
  surveyElement(element: Json): Json {
    if (!this.active) return element;
    const answers = (element.answers as Json[]).map((answer) => {
      const out = {
        ...this.withUnlisted(answer, 'surveyAnswer', `${String(answer.customerId)} ${String(answer.date)}`),
        date: this.labels.relabel(answer.date),
      };
      return this.scalars(this.sampleNames(this.respelled(out, `${String(answer.customerId)} ${String(answer.date)}`)));
    });
    return { ...element, answers };
  }

  /** A loyalty posting (its times keep the spec's `+0000` shape). */
  posting(record: Json): Json {
    if (!this.active) return record;
    return this.scalars(
      this.withUnlisted(record, 'posting', `${String(record.receipt)} ${String(record.postingDate)}`),
    );
  }

  /** The body of `GET /accounts`: the profile, and the loyalty state with its timestamps. */
  lookup(body: { profile: Json; loyalty?: Json }): Json {
    if (!this.active) return body;
    const out: Json = { profile: this.scalars(body.profile) };
    if (body.loyalty) {
      const loyalty = this.withUnlisted(body.loyalty, 'loyalty', String(body.profile.accountId));
      const tier = loyalty.tier as Json;
      const details = loyalty.balanceDetails as Json[];
      out.loyalty = this.scalars({
        ...loyalty,
        tier: { ...tier, expiry: this.labels.relabel(tier.expiry) },
        balanceDetails: details.map((detail) => ({ ...detail, expires: this.labels.relabel(detail.expires) })),
      });
    }
    return out;
  }

  /** A voucher of `GET /accounts/vouchers/get`. */
  voucher(record: Json): Json {
    if (!this.active) return record;
    return this.scalars(this.withUnlisted(record, 'voucher', String(record.code)));
  }

  /** Any other body of records (profiles): only its scalars change. */
  other<T>(body: T): unknown {
    return this.readings.scalars === 'strings' ? stringScalars(body) : body;
  }

  /** Under `missingText: 'varied'`, each text `NULL` of the record (custom fields too) in another spelling. */
  private respelled(record: Json, identity: string): Json {
    if (this.readings.missingText === 'NULL') return record;
    const out = memberMap();
    for (const [name, value] of Object.entries(record))
      out[name] =
        value === 'NULL'
          ? spelledNull(`${identity} ${name}`)
          : value !== null && typeof value === 'object' && !Array.isArray(value)
            ? this.respelled(value as Json, `${identity} ${name}`)
            : value;
    return out;
  }

  private withUnlisted(record: Json, type: UnlistedRecordType, identity: string): Json {
    return this.readings.unlistedFields ? { ...record, ...unlistedMembers(type, identity) } : record;
  }

  /** The spec's tables call a customer's id `customerId` in both exports; its samples and every other record, `accountId`. */
  private sampleNames(record: Json): Json {
    if (this.readings.fieldNames !== 'sample' || !('customerId' in record)) return record;
    const out = memberMap();
    for (const [name, value] of Object.entries(record)) out[name === 'customerId' ? 'accountId' : name] = value;
    return out;
  }

  /** The record with each multiple-choice field that holds options served in the form of the `choiceLists` reading. */
  private choiceLists(record: Json, fields: Readonly<Record<string, string | null>>): Json {
    const map = record.customFieldMap;
    if (this.readings.choiceLists === 'comma' || !map || typeof map !== 'object') return record;
    const served = memberMap();
    for (const [name, value] of Object.entries(map as Json)) {
      const canonical = Object.hasOwn(fields, name) ? fields[name] : null;
      served[name] = canonical == null ? value : servedFieldValue(name, canonical, this.readings.choiceLists);
    }
    return { ...record, customFieldMap: served };
  }

  private scalars(record: Json): Json {
    return this.readings.scalars === 'strings' ? (stringScalars(record) as Json) : record;
  }
}

/** The other spellings of the text NULL a service may send: other cases, spaces around. */
const NULL_SPELLINGS = ['null', ' Null ', 'NULL\t', 'nULL', '  null'] as const;

/** One of {@link NULL_SPELLINGS}, the same for the same member of the same record. */
function spelledNull(where: string): string {
  let h = 0;
  for (let i = 0; i < where.length; i++) h = (h * 31 + where.charCodeAt(i)) >>> 0;
  return NULL_SPELLINGS[h % NULL_SPELLINGS.length]!;
}

/** Every number and boolean inside `value` as a JSON string (`12.5` → `"12.5"`, `true` → `"true"`). */
export function stringScalars(value: unknown): unknown {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return value.map(stringScalars);
  if (value !== null && typeof value === 'object') {
    const out = memberMap();
    for (const [name, member] of Object.entries(value)) out[name] = stringScalars(member);
    return out;
  }
  return value;
}

/** An object whose members are data: without a prototype, a member named `__proto__` is a member like any other. */
function memberMap(): Json {
  return Object.create(null) as Json;
}
