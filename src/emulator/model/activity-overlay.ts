import { type AccountsListing, type TruthAccount, truthAccount } from './account-export.js';
import { parseDay } from './calendar.js';
import type { CustomerVersion } from './customer-directory.js';
import { EMPTY_WINDOW, type ExportWindow } from './export-window.js';
import { type LoyaltyState, loyaltyState } from './loyalty-summary.js';
import { type Posting, type TruthPosting, truthPosting } from './posting-ledger.js';
import type { SourceData } from './source-data.js';
import { type HeldVoucher, pointsVoucher, seededVouchers } from './vouchers.js';

/** The profile members a modify (`PUT /accounts/update`) may change; identity (id, phone, e-mail) never changes. */
export interface ProfileEdit {
  first?: string | null;
  last?: string | null;
  birthdate?: string | null;
  gender?: string | null;
  nationality?: string | null;
  city?: string | null;
  country?: string | null;
  language?: string | null;
  /** Business fields to set; keys not named keep their value. */
  businessFields?: Record<string, string | null>;
}

/** A transaction (6) or purchase (14) the source accepted, as a rollback finds it by its receipt. */
export interface AcceptedSale {
  receipt: string;
  channel: 'store' | 'online';
  /** Customer index, or -1 for a sale without a known customer (it earned nothing). */
  customer: number;
  /** The postings it booked. */
  booked: Posting[];
  rolledBack: boolean;
}

/** An appointment as last submitted (8). */
export interface StoredAppointment {
  referenceNumber: string;
  /** Who it belongs to: `C…` for a known customer, else the phone or e-mail given, else "". */
  owner: string;
  body: Record<string, unknown>;
  createdMs: number;
  updatedMs: number;
  /** Submissions after the first. */
  updates: number;
}

/**
 * What clients wrote, on top of the seeded data: profile changes and loyalty postings per customer. The
 * seeded data stays a pure function of the seed; every read that must reflect writes (postings, lookups,
 * vouchers, the accounts export, the ground truth) asks this overlay, which answers with the seeded data
 * alone for a customer nobody wrote about.
 */
export class ActivityOverlay {
  private readonly postings = new Map<number, Posting[]>();
  private readonly versions = new Map<number, CustomerVersion[]>();
  /** Every profile change written, in the order written. */
  private readonly changes: CustomerVersion[] = [];
  private readonly windows = new Map<string, ExportWindow<TruthAccount>>();
  /** Accepted transactions and purchases by receipt: one namespace, a receipt names one sale. */
  readonly sales = new Map<string, AcceptedSale>();
  /** Appointments by reference number. */
  readonly appointments = new Map<string, StoredAppointment>();
  /** Product views received (they change nothing else). */
  pageViews = 0;

  constructor(readonly data: SourceData) {}

  /**
   * Customer `i`'s postings, oldest first: the seeded ones and the written ones, merged by posting time.
   * `cached: false` leaves the ledger's small cache alone, for scans over every customer.
   */
  postingsOf(i: number, cached = true): readonly Posting[] {
    const seeded = cached ? this.data.postings.postingsOf(i) : this.data.postings.generate(i);
    const written = this.postings.get(i);
    if (!written) return seeded;
    const merged: Posting[] = [];
    let s = 0;
    for (const posting of written) {
      while (s < seeded.length && seeded[s]!.postedMs <= posting.postedMs) merged.push(seeded[s++]!);
      merged.push(posting);
    }
    while (s < seeded.length) merged.push(seeded[s++]!);
    return merged;
  }

  /** Customer `i`'s loyalty standing as of `asOfMs`, written postings included. */
  loyaltyOf(i: number, asOfMs: number, cached = true): LoyaltyState {
    return loyaltyState(this.postingsOf(i, cached), asOfMs, this.data.directory.createdAt(i), this.data.days);
  }

  /** The vouchers customer `i` holds at `asOfMs`: the seeded ones, then the points voucher of a customer with written postings. */
  vouchersOf(i: number, asOfMs: number, cached = true): HeldVoucher[] {
    const { data } = this;
    const vouchers = seededVouchers(data.options.seed, i, data.directory.createdAt(i), asOfMs, data.days);
    if (this.hasPostings(i))
      vouchers.push(pointsVoucher(data.directory.customerId(i), this.loyaltyOf(i, asOfMs, cached), data.days));
    return vouchers;
  }

  /** Whether customer `i` exists at `asOfMs`: it was created by then. */
  existsAt(i: number, asOfMs: number): boolean {
    return this.data.directory.createdAt(i) <= asOfMs;
  }

  /** Whether anything was booked on customer `i`'s points. */
  hasPostings(i: number): boolean {
    return this.postings.has(i);
  }

  /** Books postings on customer `i` (in order, each no earlier than the last one booked). */
  book(i: number, postings: readonly Posting[]): void {
    if (postings.length === 0) return;
    const list = this.postings.get(i) ?? [];
    for (const posting of postings) {
      // Written postings of a customer stay in posting-time order even if a test clock goes backwards.
      const last = list.at(-1);
      list.push(last && last.postedMs > posting.postedMs ? { ...posting, postedMs: last.postedMs } : posting);
    }
    this.postings.set(i, list);
  }

  /** Customer `i` as of its last change, written or seeded. */
  latest(i: number): CustomerVersion {
    return this.versions.get(i)?.at(-1) ?? this.data.directory.latest(i);
  }

  /** Whether customer `i`'s profile was modified by a client. */
  hasProfileChanges(i: number): boolean {
    return this.versions.has(i);
  }

  /**
   * Applies a modify at instant `ms` on top of the customer's latest version and returns the new version.
   * Its version number continues after the seeded ones, so it renders with a draw of its own.
   */
  modify(i: number, edit: ProfileEdit, ms: number): CustomerVersion {
    const previous = this.latest(i);
    const fields = new Map(previous.customFields);
    for (const [name, value] of Object.entries(edit.businessFields ?? {})) fields.set(name, value);
    const { businessFields: _, ...members } = edit;
    const version: CustomerVersion = {
      ...previous,
      ...members,
      version: previous.version + 1,
      profileSetMs: ms,
      customFields: [...fields],
    };
    const list = this.versions.get(i) ?? [];
    list.push(version);
    this.versions.set(i, list);
    this.changes.push(version);
    this.windows.clear();
    return version;
  }

  /**
   * The accounts export of the inclusive days [start, end]: the seeded window, except that a customer
   * modified by a client in those days is served once, as of its last written change there, after the
   * seeded records. Days outside the seeded range hold only written changes.
   *
   * Under the other listings: `per-change` serves the seeded window's every change and then every written one
   * in the days; `current` serves every customer as of its latest change, written or seeded.
   */
  accountsWindow(start: string, end: string, listing: AccountsListing = 'last-change'): ExportWindow<TruthAccount> {
    const days = this.data.calendar.span(start, end);
    const seededWindow: ExportWindow<TruthAccount> = days
      ? this.data.accounts.window(days.first, days.last, listing)
      : EMPTY_WINDOW;
    const seeded = listing === 'current' && this.versions.size > 0 ? this.currentOf(seededWindow) : seededWindow;
    const [fromMs, toMs] = this.instants(start, end);
    const inWindow = this.changes.filter((version) => version.profileSetMs >= fromMs && version.profileSetMs < toMs);
    if (inWindow.length === 0) return seeded;
    const key = `${start}:${end}:${listing}`;
    const cached = this.windows.get(key);
    if (cached) return cached;
    const lastOf = new Map<number, CustomerVersion>();
    for (const version of inWindow) lastOf.set(version.index, version);
    const written =
      listing === 'per-change'
        ? inWindow.sort((a, b) => a.profileSetMs - b.profileSetMs)
        : [...lastOf.values()]
            .sort((a, b) => a.profileSetMs - b.profileSetMs)
            .map((v) => (listing === 'current' ? this.latest(v.index) : v));
    const replaced = new Set(listing === 'per-change' ? [] : written.map((v) => v.customerId));
    const kept: number[] = [];
    for (let p = 0; p < seeded.totalCount; p++) {
      const record = seeded.served(p) as { customerId?: unknown } | null;
      if (!(record && typeof record === 'object' && replaced.has(record.customerId as string))) kept.push(p);
    }
    const window: ExportWindow<TruthAccount> = {
      totalCount: kept.length + written.length,
      served: (p) => (p < kept.length ? seeded.served(kept[p]!) : this.data.accounts.render(written[p - kept.length]!)),
      canonical: (p) =>
        p < kept.length ? seeded.canonical(kept[p]!) : { rows: [truthAccount(written[p - kept.length]!)] },
    };
    this.windows.set(key, window);
    return window;
  }

  /** `window` with each customer a client modified served as of its latest written change. */
  private currentOf(window: ExportWindow<TruthAccount>): ExportWindow<TruthAccount> {
    const writtenLatest = (p: number): CustomerVersion | null => {
      const entry = window.canonical(p);
      if (!('rows' in entry) || entry.fieldRejects) return null;
      const index = Number(entry.rows[0]!.customer_id.slice(1)) - 1;
      return this.versions.has(index) ? this.latest(index) : null;
    };
    return {
      totalCount: window.totalCount,
      served: (p) => {
        const version = writtenLatest(p);
        return version ? this.data.accounts.render(version) : window.served(p);
      },
      canonical: (p) => {
        const version = writtenLatest(p);
        return version ? { rows: [truthAccount(version)] } : window.canonical(p);
      },
    };
  }

  /** Written postings whose posting time falls on one of the inclusive days [start, end], as truth rows. */
  *writtenPostings(start: string, end: string): Generator<TruthPosting> {
    const [fromMs, toMs] = this.instants(start, end);
    for (const [i, list] of [...this.postings].sort(([a], [b]) => a - b)) {
      const customerId = this.data.directory.customerId(i);
      for (const posting of list)
        if (posting.postedMs >= fromMs && posting.postedMs < toMs) yield truthPosting(customerId, posting);
    }
  }

  /** The instants bounding the inclusive days [start, end] in the source's zone: [from, to). */
  private instants(start: string, end: string): [number, number] {
    const dayStart = (day: number) => {
      const date = new Date(day * 86_400_000);
      return this.data.calendar.clock.startOfDay(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate());
    };
    const first = parseDay(start);
    const last = parseDay(end);
    if (first === null || last === null) throw new RangeError(`not a day range: ${start}..${end}`);
    return [dayStart(first), dayStart(last + 1)];
  }
}
