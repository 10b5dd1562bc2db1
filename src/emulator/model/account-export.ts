import { type BadRecord, badAccount, badCountFor, badSlotsBefore, readable, readableTexts } from './bad-records.js';
import type { ChangeLog } from './change-log.js';
import type { CustomerDirectory, CustomerVersion } from './customer-directory.js';
import { servedFieldValue } from './custom-field-pool.js';
import { Stream, randomFor } from './random.js';
import { renderText, renderTimestamp } from './rendering.js';
import type { CanonicalEntry, ExportWindow, WindowedExport } from './export-window.js';
import { isoUtc } from './zone-clock.js';

/** A customer as a correct warehouse must hold it after loading a window. */
export interface TruthAccount {
  customer_id: string;
  phone: string | null;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  /** `YYYY-MM-DD` */
  birthdate: string | null;
  source: string | null;
  /** ISO UTC, e.g. `2024-03-01T10:15:00.000Z` */
  profile_set_at: string | null;
  country: string | null;
  customer_since: string | null;
  member_since: string | null;
  nationality: string | null;
  gender: string | null;
  city: string | null;
  language: string | null;
  /**
   * Original key -> value; "NULL" and "" are null. A multiple-choice field's value is its option keys as a JSON
   * array (`["wine","kids"]`), whatever form the `choiceLists` reading serves it in.
   */
  custom_fields: Record<string, string | null>;
}

const CACHED_WINDOWS = 16;

/** What the export lists for a window (the `accountsListing` reading); see {@link AccountExport}. */
export type AccountsListing = 'last-change' | 'per-change' | 'current';

/**
 * `GET /business-data/accounts`: each customer created or modified in the window, once, as of its last
 * change in the window, ordered by that change's time, with malformed records spread among them.
 *
 * Which change is "last in the window" depends on the window's end, so the first request of a window
 * scans that window's changes once (never all customers) and keeps the result; later pages are O(size).
 *
 * Other listings (readings of a spec that does not say): `per-change` lists every change in the window, each
 * as of that change; `current` lists the same customers as `last-change`, each with its latest profile and
 * `profileSet`, even when that change came after the window. The canonical form of a record is what it serves.
 */
export class AccountExport implements WindowedExport<TruthAccount> {
  /** `badOffsets[d]..badOffsets[d + 1]` are the global indexes of day `d`'s malformed records. */
  private readonly badOffsets: Uint32Array;
  private readonly cache = new Map<string, Uint32Array>();

  constructor(
    private readonly changes: ChangeLog,
    private readonly directory: CustomerDirectory,
    badRecordRate: number,
  ) {
    const { seed, calendar } = directory.timeline;
    this.badOffsets = new Uint32Array(calendar.dayCount + 1);
    for (let d = 0; d < calendar.dayCount; d++) {
      const good = changes.offsets[d + 1]! - changes.offsets[d]!;
      this.badOffsets[d + 1] =
        this.badOffsets[d]! + badCountFor(seed, Stream.badAccountsPerDay, d, good, badRecordRate);
    }
  }

  window(first: number, last: number, listing: AccountsListing = 'last-change'): ExportWindow<TruthAccount> {
    const entries = this.entries(first, last, listing === 'per-change');
    const current = listing === 'current';
    return {
      totalCount: entries.length,
      served: (position) => this.served(entries[position]!, current),
      canonical: (position) => this.canonical(entries[position]!, current),
    };
  }

  /** Served form of a version: the same version always renders the same way. */
  render(version: CustomerVersion): Record<string, unknown> {
    const random = randomFor(this.directory.timeline.seed, Stream.accountRendering, version.index, version.version);
    const clock = this.directory.timeline.calendar.clock;
    const customFieldMap: Record<string, string | null> = {};
    // a multiple-choice field is served as its keys joined by `,`: the `choiceLists` reading serves the other forms
    for (const [name, value] of version.customFields)
      customFieldMap[name] = renderText(servedFieldValue(name, value), random);
    return {
      phone: renderText(version.phone, random),
      email: renderText(version.email, random),
      customerId: version.customerId,
      first: renderText(version.first, random),
      last: renderText(version.last, random),
      birthdate: renderText(version.birthdate, random),
      source: renderText(version.source, random),
      profileSet: renderTimestamp(version.profileSetMs, random, clock),
      country: renderText(version.country, random),
      customerSince: renderTimestamp(version.customerSinceMs, random, clock),
      memberSince: renderTimestamp(version.memberSinceMs, random, clock),
      nationality: renderText(version.nationality, random),
      gender: renderText(version.gender, random),
      city: renderText(version.city, random),
      language: renderText(version.language, random),
      customFieldMap,
    };
  }

  /** Entries are change-log positions, or `changes.size + i` for malformed record `i`. */
  private entries(first: number, last: number, everyChange: boolean): Uint32Array {
    const key = `${first}:${last}:${everyChange}`;
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const { offsets } = this.changes;
    const badBase = this.changes.size;
    const entries = new Uint32Array(
      offsets[last + 1]! - offsets[first]! + this.badOffsets[last + 1]! - this.badOffsets[first]!,
    );
    let length = 0;
    for (let day = first; day <= last; day++) {
      const good: number[] = [];
      for (let p = offsets[day]!; p < offsets[day + 1]!; p++)
        if (everyChange || this.changes.isLastThrough(p, last)) good.push(p);
      const bad = this.badOffsets[day + 1]! - this.badOffsets[day]!;
      const total = good.length + bad;
      for (let slot = 0; slot < total; slot++) {
        const before = badSlotsBefore(slot, bad, total);
        entries[length++] =
          badSlotsBefore(slot + 1, bad, total) > before
            ? badBase + this.badOffsets[day]! + before
            : good[slot - before]!;
      }
    }
    const result = entries.subarray(0, length);
    this.cache.set(key, result);
    if (this.cache.size > CACHED_WINDOWS) this.cache.delete(this.cache.keys().next().value!);
    return result;
  }

  private served(entry: number, current: boolean): unknown {
    if (entry >= this.changes.size) return this.bad(entry - this.changes.size).payload;
    return this.render(this.versionOf(entry, current));
  }

  private canonical(entry: number, current: boolean): CanonicalEntry<TruthAccount> {
    if (entry >= this.changes.size) {
      const bad = this.bad(entry - this.changes.size);
      if (!bad.unreadable) return { reason: bad.reason };
      const row = badAccountTruth(bad);
      const { field, raw } = bad.unreadable;
      return { rows: [row], fieldRejects: [{ customer_id: row.customer_id, field, raw_value: JSON.stringify(raw) }] };
    }
    return { rows: [truthAccount(this.versionOf(entry, current))] };
  }

  private versionOf(entry: number, current: boolean): CustomerVersion {
    const { customer, version } = this.changes.event(entry);
    return current ? this.directory.latest(customer) : this.directory.version(customer, version);
  }

  private bad(index: number) {
    let lo = 0;
    let hi = this.badOffsets.length - 2;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.badOffsets[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    const { seed, calendar } = this.directory.timeline;
    return badAccount(seed, index, calendar.dayStart(lo));
  }
}

/** A malformed account that still loads: as served, with the field that cannot be read NULL. */
function badAccountTruth(bad: BadRecord): TruthAccount {
  const r = bad.payload;
  const text = (name: string) => {
    const value = readable(bad, r, name);
    return typeof value === 'string' && value.trim() !== '' && value.trim() !== 'NULL' ? value : null;
  };
  // a bad record's profileSet, when it can be read, is `YYYY-MM-DD HH:MM:SS UTC`
  const profileSet = text('profileSet');
  return {
    customer_id: r.customerId as string,
    phone: text('phone'),
    email: text('email'),
    first_name: text('first'),
    last_name: text('last'),
    birthdate: text('birthdate'),
    source: text('source'),
    profile_set_at: profileSet === null ? null : isoUtc(Date.parse(profileSet.replace(' UTC', 'Z').replace(' ', 'T'))),
    country: text('country'),
    customer_since: text('customerSince'),
    member_since: text('memberSince'),
    nationality: text('nationality'),
    gender: text('gender'),
    city: text('city'),
    language: text('language'),
    custom_fields: readableTexts(bad, r, 'customFieldMap'),
  };
}

/** The canonical (warehouse) form of a customer version. */
export function truthAccount(version: CustomerVersion): TruthAccount {
  const time = (ms: number | null): string | null => (ms === null ? null : isoUtc(ms));
  return {
    customer_id: version.customerId,
    phone: version.phone,
    email: version.email,
    first_name: version.first,
    last_name: version.last,
    birthdate: version.birthdate,
    source: version.source,
    profile_set_at: time(version.profileSetMs),
    country: version.country,
    customer_since: time(version.customerSinceMs),
    member_since: time(version.memberSinceMs),
    nationality: version.nationality,
    gender: version.gender,
    city: version.city,
    language: version.language,
    custom_fields: Object.fromEntries(version.customFields),
  };
}
