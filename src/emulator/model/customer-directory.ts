import type { SetupSeason } from './setup-season.js';
import { CUSTOM_FIELD_POOL, type CustomFieldDefinition, customFieldValue } from './custom-field-pool.js';
import { formatDay, parseDay } from './calendar.js';
import type { ChangeSchedule, CustomerTimeline } from './customer-timeline.js';
import {
  CITIES,
  COUNTRIES,
  EMAIL_DOMAINS,
  FIRST_NAMES,
  GENDERS,
  LANGUAGES,
  LAST_NAMES,
  NATIONALITIES,
  SOURCES,
} from './name-pools.js';
import { type Random, Stream, randomFor } from './random.js';

/** A customer's profile as of one change: canonical values (null means missing), before rendering. */
export interface CustomerVersion {
  index: number;
  version: number;
  customerId: string;
  phone: string | null;
  email: string | null;
  first: string | null;
  last: string | null;
  birthdate: string | null;
  source: string | null;
  /** The change instant itself: the profile was set when it changed. */
  profileSetMs: number;
  country: string | null;
  customerSinceMs: number | null;
  memberSinceMs: number | null;
  nationality: string | null;
  gender: string | null;
  city: string | null;
  language: string | null;
  /** Custom fields in pool order; a null value is a present key with a missing value. */
  customFields: Array<[string, string | null]>;
}

/** Attributes fixed for the customer's whole life. */
type CustomerBase = Omit<CustomerVersion, 'version' | 'profileSetMs' | 'city' | 'language' | 'customFields'>;

const PHONE_SPACE = 100_000_000;
const PHONE_STEP = 7919; // prime, so i -> i * step (mod 1e8) is a bijection and phones never repeat
const PHONE_PREFIX = '3069';
const YEAR_MS = 365 * 86_400_000;
const DST_NUDGES_S = [-3600, -1800, -61, -1, 0, 1, 59, 1800, 3599];

/**
 * Identity and profile versions of every customer, each computed from its index alone. Phones and
 * e-mails encode the index, so a lookup by either is O(1) without any table.
 */
export class CustomerDirectory {
  private readonly phoneOffset: number;
  private readonly stepInverse: bigint;

  /**
   * @param dstInstants historical offset-change instants of the zone; some customers' `customerSince`
   *   is put right around one of them
   * @param contactlessRate share of customers with neither phone nor e-mail
   * @param season the setup changes the business makes, if any
   */
  constructor(
    readonly timeline: CustomerTimeline,
    private readonly dstInstants: readonly number[],
    private readonly contactlessRate = 0,
    private readonly season: SetupSeason | null = null,
  ) {
    this.phoneOffset = ((timeline.seed % PHONE_SPACE) * 104_729 + 12_345) % PHONE_SPACE;
    this.stepInverse = modularInverse(BigInt(PHONE_STEP), BigInt(PHONE_SPACE));
  }

  /** Number of customers. */
  get size(): number {
    return this.timeline.size;
  }

  /** The stable id of customer `i`, e.g. `C000123`. */
  customerId(i: number): string {
    return `C${String(i + 1).padStart(6, '0')}`;
  }

  /** Customer index of a phone, or -1. Phone-less customers are never found this way. */
  findByPhone(phone: string): number {
    const digits = phone.startsWith('+') ? phone.slice(1) : phone;
    if (!/^\d{12}$/.test(digits) || !digits.startsWith(PHONE_PREFIX)) return -1;
    const permuted = BigInt((Number(digits.slice(PHONE_PREFIX.length)) - this.phoneOffset + PHONE_SPACE) % PHONE_SPACE);
    const i = Number((permuted * this.stepInverse) % BigInt(PHONE_SPACE));
    return i < this.size && this.base(i).phone === digits ? i : -1;
  }

  /** Customer index of an e-mail (case-insensitive), or -1. */
  findByEmail(email: string): number {
    const match = /\.(\d+)@[^@]+$/.exec(email);
    if (!match) return -1;
    const i = Number(match[1]) - 1;
    if (!Number.isSafeInteger(i) || i < 0 || i >= this.size) return -1;
    return this.base(i).email === email.toLowerCase() ? i : -1;
  }

  /** Number of profile versions of customer `i`. */
  versionCount(i: number): number {
    return this.timeline.schedule(i).days.length;
  }

  /** Instant customer `i` was created. */
  createdAt(i: number): number {
    return this.timeline.changeInstant(this.timeline.schedule(i), 0);
  }

  /**
   * Customer `i` has neither phone nor e-mail (`contactlessRate`). Drawn from a stream of its own, so the share
   * changes nothing else of any customer.
   */
  isContactless(i: number): boolean {
    return (
      this.contactlessRate > 0 && randomFor(this.timeline.seed, Stream.contactless, i).next() < this.contactlessRate
    );
  }

  /** The attributes of customer `i` that never change. */
  base(i: number, schedule: ChangeSchedule = this.timeline.schedule(i)): CustomerBase {
    const random = randomFor(this.timeline.seed, Stream.customer, i);
    const contact = random.next();
    const first = random.int(0, FIRST_NAMES.length - 1);
    const last = random.int(0, LAST_NAMES.length - 1);
    const domain = random.pick(EMAIL_DOMAINS);
    const phoneDigits = (((i * PHONE_STEP) % PHONE_SPACE) + this.phoneOffset) % PHONE_SPACE;
    const createdMs = this.timeline.changeInstant(schedule, 0);
    const customerSinceMs = this.customerSince(random, createdMs);
    const memberSinceMs =
      customerSinceMs === null || random.chance(0.25)
        ? null
        : customerSinceMs + Math.floor(random.next() * ((createdMs - customerSinceMs) / 1000)) * 1000;
    const contactless = this.isContactless(i);
    return {
      index: i,
      customerId: this.customerId(i),
      // About 10% have no phone and 5% no e-mail; both only for the contactless share.
      phone: contactless || contact < 0.1 ? null : PHONE_PREFIX + String(phoneDigits).padStart(8, '0'),
      email:
        contactless || (contact >= 0.1 && contact < 0.15)
          ? null
          : `${FIRST_SLUGS[first]}.${LAST_SLUGS[last]}.${i + 1}@${domain}`,
      first: random.chance(0.03) ? null : FIRST_NAMES[first]!,
      last: random.chance(0.03) ? null : LAST_NAMES[last]!,
      birthdate: random.chance(0.06) ? null : birthdate(random),
      source: random.chance(0.1) ? null : random.pick(SOURCES),
      country: random.chance(0.05) ? null : random.pick(COUNTRIES),
      customerSinceMs,
      memberSinceMs,
      nationality: random.chance(0.1) ? null : random.pick(NATIONALITIES),
      gender: random.chance(0.05) ? null : random.pick(GENDERS),
    };
  }

  /** Customer `i` as of its change `version` (0 = creation). */
  version(i: number, version: number): CustomerVersion {
    const schedule = this.timeline.schedule(i);
    if (version < 0 || version >= schedule.days.length) throw new RangeError(`customer ${i} has no version ${version}`);
    const base = this.base(i, schedule);
    let city: string | null = null;
    let language: string | null = null;
    let fields = new Map<string, string | null>();
    for (let v = 0; v <= version; v++) {
      const random = randomFor(this.timeline.seed, Stream.customerVersion, i, v);
      if (v === 0 || random.chance(0.5)) city = random.chance(0.1) ? null : random.pick(CITIES);
      if (v === 0 || random.chance(0.3)) language = random.chance(0.1) ? null : random.pick(LANGUAGES);
      fields = nextCustomFields(fields, v === 0, random);
      if (this.season) fields = this.season.fieldsOn(schedule.days[v]!, fields, random);
    }
    return {
      index: i,
      version,
      customerId: base.customerId,
      phone: base.phone,
      email: base.email,
      first: base.first,
      last: base.last,
      birthdate: base.birthdate,
      source: base.source,
      profileSetMs: this.timeline.changeInstant(schedule, version),
      country: base.country,
      customerSinceMs: base.customerSinceMs,
      memberSinceMs: base.memberSinceMs,
      nationality: base.nationality,
      gender: base.gender,
      city,
      language,
      customFields: [...fields],
    };
  }

  /** Customer `i` as of its last change. */
  latest(i: number): CustomerVersion {
    return this.version(i, this.versionCount(i) - 1);
  }

  private customerSince(random: Random, createdMs: number): number | null {
    const kind = random.next();
    if (kind < 0.05) return null;
    if (kind < 0.13 && this.dstInstants.length > 0) {
      // Right around a clock change: the instants a zone-naive reader gets wrong.
      return random.pick(this.dstInstants) + random.pick(DST_NUDGES_S) * 1000;
    }
    return createdMs - Math.floor((random.next() * 8 * YEAR_MS) / 1000) * 1000;
  }
}

/** Custom fields of the next version: some values change, some keys come and go. */
function nextCustomFields(
  previous: Map<string, string | null>,
  first: boolean,
  random: Random,
): Map<string, string | null> {
  const next = new Map<string, string | null>();
  for (const field of CUSTOM_FIELD_POOL) {
    const isTier = field.name === 'loyaltyTier';
    if (first) {
      if (random.chance(isTier ? 0.9 : 0.3)) next.set(field.name, freshValue(field, random));
    } else if (previous.has(field.name)) {
      if (!isTier && random.chance(0.15)) continue;
      next.set(
        field.name,
        random.chance(isTier ? 0.5 : 0.3) ? freshValue(field, random) : (previous.get(field.name) ?? null),
      );
    } else if (random.chance(0.12)) {
      next.set(field.name, freshValue(field, random));
    }
  }
  return next;
}

function freshValue(field: CustomFieldDefinition, random: Random): string | null {
  return random.chance(0.08) ? null : customFieldValue(field, random);
}

function birthdate(random: Random): string {
  return formatDay(BIRTH_DAYS_FROM + random.int(0, BIRTH_DAYS_SPAN));
}

/** ASCII letters of a name for an e-mail local part ("Zoë" -> "zoe"); non-Latin names become "customer". */
function slug(name: string): string {
  return (
    name
      .normalize('NFD')
      .replace(/[^A-Za-z]/g, '')
      .toLowerCase() || 'customer'
  );
}

const FIRST_SLUGS = FIRST_NAMES.map(slug);
const LAST_SLUGS = LAST_NAMES.map(slug);
const BIRTH_DAYS_FROM = parseDay('1940-01-01')!;
const BIRTH_DAYS_SPAN = 66 * 365;

function modularInverse(a: bigint, m: bigint): bigint {
  let [oldR, r] = [a, m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return ((oldS % m) + m) % m;
}
