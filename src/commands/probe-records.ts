import { addDays, type Day } from '../plan/days.js';
import type { CustomerIdentity } from '../source/loyalty-api.js';
import { parseSourceTimestamp } from '../transform/timestamps.js';
import { isMissingText } from '../transform/values.js';
import type { Finding } from './probe-finding.js';

type Json = Record<string, unknown>;

/** Members the spec types as numbers or booleans, per record type: where numbers as strings would show. */
const SCALARS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['posting', ['tierOrder', 'credit', 'creditValue', 'debit', 'debitValue', 'type', 'postingType']],
  ['loyalty', ['toNextTier', 'cumulativeCredit']],
  ['voucher', ['value', 'enabled']],
];

/** A customer's id is `customerId` in the exports' tables and `accountId` in the samples: the pipeline reads either. */
const ALIASES = new Map([
  ['customerId', 'accountId'],
  ['answers[].customerId', 'answers[].accountId'],
]);
const ALIAS_NAMES: ReadonlySet<string> = new Set(ALIASES.values());

/** Timestamp members per record type, by path. */
const TIMESTAMPS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['account', ['profileSet', 'customerSince', 'memberSince']],
  ['survey answer', ['answers[].date']],
  ['posting', ['postingDate', 'txnDate']],
  ['loyalty', ['tier.expiry', 'balanceDetails[].expires']],
  ['voucher', ['redeemed']],
];

/**
 * What the probe saw of the service's records, per record type (`account`, `survey answer`, `posting`, `loyalty`,
 * `voucher`): their members, timestamps and scalars, and the accounts per window it read, for the findings that
 * need records rather than one answer.
 */
export class RecordSample {
  private readonly records = new Map<string, Json[]>();
  private readonly accountWindows: Array<{ window: { start: Day; end: Day }; records: Json[] }> = [];

  constructor(private readonly listedOf: () => ReadonlyMap<string, ReadonlySet<string>>) {}

  surveys(elements: unknown[]): void {
    for (const element of objects(elements)) {
      const { answers, ...rest } = element;
      for (const answer of objects(Array.isArray(answers) ? answers : [])) {
        const flat: Json = { ...rest, answers: undefined };
        for (const [name, value] of Object.entries(answer)) flat[`answers[].${name}`] = value;
        this.add('survey answer', flat);
      }
    }
  }

  accounts(window: { start: Day; end: Day }, data: unknown[]): void {
    const records = objects(data);
    for (const r of records) this.add('account', r);
    this.accountWindows.push({ window, records });
  }

  postings(data: unknown[]): void {
    for (const p of objects(data)) this.add('posting', p);
  }

  loyalty(loyalty: unknown): void {
    for (const l of objects([loyalty])) {
      const flat: Json = { ...l };
      if (l.tier && typeof l.tier === 'object') flat['tier.expiry'] = (l.tier as Json).expiry;
      const details = objects(Array.isArray(l.balanceDetails) ? l.balanceDetails : []);
      if (details[0]) flat['balanceDetails[].expires'] = details[0].expires;
      this.add('loyalty', flat);
    }
  }

  vouchers(list: unknown[]): void {
    for (const v of objects(list)) this.add('voucher', v);
  }

  /** The day of the first survey answer seen, as its timestamp writes it. */
  answerDay(): Day | undefined {
    for (const r of this.records.get('survey answer') ?? []) {
      const date = r['answers[].date'];
      if (typeof date === 'string' && /^\d{4}-\d{2}-\d{2}/.test(date)) return date.slice(0, 10);
    }
    return undefined;
  }

  /** Up to `n` customers of the accounts seen that the per-customer endpoints can be asked about. */
  customers(n: number): CustomerIdentity[] {
    const out: CustomerIdentity[] = [];
    const seen = new Set<string>();
    for (const r of this.records.get('account') ?? []) {
      const id = text(r.customerId) ?? text(r.accountId);
      const phone = text(r.phone);
      const email = text(r.email);
      if (id === null || seen.has(id) || (phone === null && email === null)) continue;
      seen.add(id);
      out.push({ customerId: id, phone, email });
      if (out.length === n) break;
    }
    return out;
  }

  /**
   * What the accounts export lists for a window: a customer twice in one window is a listing per change; a
   * profile set after the window's end, the current profile; a customer listed in both windows with a profile set
   * in the first, the profile as of its last change there.
   */
  listingFinding(): Finding {
    const name = 'accounts listing';
    const idOf = (r: Json) => text(r.customerId) ?? text(r.accountId);
    const setDay = (r: Json) => {
      const t = text(r.profileSet);
      return t !== null && /^\d{4}-\d{2}-\d{2}/.test(t) ? t.slice(0, 10) : null;
    };
    for (const { window, records } of this.accountWindows) {
      const ids = records.map(idOf).filter((id) => id !== null);
      const twice = ids.find((id, i) => ids.indexOf(id) !== i);
      if (twice !== undefined)
        return {
          name,
          service: `per change: customer ${twice} is listed twice in ${window.start}..${window.end}`,
          config: null,
          verdict: 'seen',
        };
    }
    for (const { window, records } of this.accountWindows) {
      // a day of slack: a label of another zone may write the instant on the next day
      const late = records.find((r) => (setDay(r) ?? '') > addDays(window.end, 1));
      if (late)
        return {
          name,
          service: `the current profile: ${idOf(late)} is listed in ${window.start}..${window.end} with a profile set on ${setDay(late)}`,
          config: null,
          verdict: 'seen',
        };
    }
    const [older, newer] = this.accountWindows;
    if (older && newer) {
      const later = new Set(newer.records.map(idOf));
      const both = older.records.find(
        (r) => later.has(idOf(r)) && (setDay(r) ?? '9999') <= addDays(older.window.end, 1),
      );
      if (both)
        return {
          name,
          service: `each customer once, as of its last change in the window: ${idOf(both)}, changed again later, is listed in ${older.window.start}..${older.window.end} with a profile set on ${setDay(both)}`,
          config: null,
          verdict: 'seen',
        };
    }
    return {
      name,
      service: 'not settled: no customer of the weeks looked at changed twice',
      config: null,
      verdict: 'unsettled',
    };
  }

  /** Findings of the records: timestamp shapes and zone labels, numbers as strings, field names, unlisted members. */
  findings(timezone: string): Finding[] {
    return [this.timestamps(timezone), this.scalars(), ...this.fields()];
  }

  private timestamps(timezone: string): Finding {
    const shapes = new Set<string>();
    const labels = new Set<string>();
    const unreadable: string[] = [];
    for (const [type, paths] of TIMESTAMPS) {
      for (const r of this.records.get(type) ?? []) {
        for (const path of paths) {
          const t = text(r[path]);
          if (t === null) continue;
          shapes.add(t.replace(/\d/g, '9'));
          const label = /(?:\d)\s*([A-Za-z][A-Za-z/_+-]*|[+-]\d{2}:?\d{2}|Z)$/.exec(t)?.[1];
          labels.add(label ?? '(none)');
          try {
            parseSourceTimestamp(t, timezone, path);
          } catch {
            if (unreadable.length < 3) unreadable.push(`${type} ${path} ${JSON.stringify(t)}`);
          }
        }
      }
    }
    const name = 'timestamps and zone labels';
    if (shapes.size === 0)
      return { name, service: 'not settled: no timestamps seen', config: null, verdict: 'unsettled' };
    const service = `shapes ${[...shapes].slice(0, 5).join(' | ')}; labels ${[...labels].join(', ')}`;
    if (unreadable.length === 0) return { name, service, config: null, verdict: 'seen' };
    return {
      name,
      service: `${service}; the pipeline cannot read ${unreadable.join(', ')}`,
      config: null,
      verdict: 'differs',
      set: ['# timestamps: the pipeline cannot read a zone label the service sends; nothing in jobs.yaml changes that'],
    };
  }

  private scalars(): Finding {
    let numbers = 0;
    let strings = 0;
    for (const [type, members] of SCALARS) {
      for (const r of this.records.get(type) ?? []) {
        for (const m of members) {
          const v = r[m];
          if (typeof v === 'number' || typeof v === 'boolean') numbers++;
          else if (typeof v === 'string' && !isMissingText(v)) strings++;
        }
      }
    }
    const name = 'numbers and booleans';
    if (numbers + strings === 0)
      return {
        name,
        service: 'not settled: no postings, loyalty state or vouchers seen',
        config: null,
        verdict: 'unsettled',
      };
    const service =
      strings === 0
        ? `JSON numbers and booleans (${numbers} values)`
        : numbers === 0
          ? `sent as JSON strings (${strings} values); the pipeline reads them`
          : `${numbers} as JSON numbers or booleans, ${strings} as strings; the pipeline reads both`;
    return { name, service, config: null, verdict: 'seen' };
  }

  /** Per record type: listed members no record carried (another name?), and members the spec does not list. */
  private fields(): Finding[] {
    const out: Finding[] = [];
    for (const [type, listed] of this.listedOf()) {
      const records = this.records.get(type) ?? [];
      if (records.length === 0) {
        out.push({
          name: `fields of ${type}`,
          service: `not settled: no ${type} record seen`,
          config: null,
          verdict: 'unsettled',
        });
        continue;
      }
      const seen = new Map<string, number>();
      for (const r of records)
        for (const [k, v] of Object.entries(r)) if (v !== undefined) seen.set(k, (seen.get(k) ?? 0) + 1);
      const renamed = [...ALIASES]
        .filter(([m, a]) => listed.has(m) && !seen.has(m) && seen.has(a))
        .map(([m, a]) => `${m} as ${a}`);
      const absent = [...listed].filter(
        (m) =>
          !seen.has(m) &&
          !ALIAS_NAMES.has(m) &&
          !seen.has(ALIASES.get(m) ?? m) &&
          !(type === 'survey answer' && m === 'answers'),
      );
      const unlisted = [...seen].filter(
        ([m]) => !listed.has(m) && !(type === 'loyalty' && m.includes('.')) && !m.includes('[].expires'),
      );
      const extra =
        (renamed.length === 0 ? '' : `names ${renamed.join(', ')} (the pipeline reads either name); `) +
        (unlisted.length === 0
          ? 'no member the spec does not list'
          : `unlisted ${unlisted.map(([m, n]) => `${m} (${n} of ${records.length})`).join(', ')}`);
      if (absent.length > 0) {
        out.push({
          name: `fields of ${type}`,
          service: `${records.length} seen; none carries ${absent.join(', ')}; ${extra}`,
          config: null,
          verdict: 'differs',
          set: [
            `# ${type}: the service does not send ${absent.join(', ')} as the spec's tables name them; nothing in jobs.yaml renames a field`,
          ],
        });
      } else
        out.push({
          name: `fields of ${type}`,
          service: `${records.length} seen, every listed member present; ${extra}`,
          config: null,
          verdict: 'seen',
        });
    }
    return out;
  }

  private add(type: string, record: Json): void {
    let list = this.records.get(type);
    if (!list) this.records.set(type, (list = []));
    list.push(record);
  }
}

function objects(list: unknown[]): Json[] {
  return list.filter((x): x is Json => x !== null && typeof x === 'object' && !Array.isArray(x));
}

/** A text value, or null for null, the text NULL and empty text. */
function text(value: unknown): string | null {
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') return null;
  return isMissingText(value) ? null : value.trim();
}
