import {
  type BadRecord,
  badCountFor,
  badSlotsBefore,
  badSurveyElement,
  readable,
  readableTexts,
} from './bad-records.js';
import type { CustomerDirectory } from './customer-directory.js';
import type { CanonicalEntry, ExportWindow, WindowedExport } from './export-window.js';
import { LOYALTY_TIERS } from './loyalty-tiers.js';
import { BRANDS, OPERATORS, STAFF } from './name-pools.js';
import { type Random, Stream, randomFor } from './random.js';
import { canonicalText, renderText, renderTimestamp } from './rendering.js';
import type { SetupSeason } from './setup-season.js';
import { SURVEYS, answerOf, dataObject, questionMap } from './survey-catalog.js';
import { isoUtc } from './zone-clock.js';

/** One answer record as a correct warehouse must hold it. */
export interface TruthSurveyResponse {
  customer_id: string;
  /** ISO UTC */
  answered_at: string;
  brand: string | null;
  branch: string | null;
  staff: string | null;
  operator: string | null;
  receipt: string | null;
  tier_name: string | null;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  email: string | null;
  /** Question text -> code, of the answer's survey. */
  questions: Record<string, string>;
  /** Code -> answer, only for codes present in `questAnsMap`; "NULL" and "" are null. */
  answers: Record<string, string | null>;
}

interface Element {
  served: Record<string, unknown>;
  rows: TruthSurveyResponse[];
}

const ANSWERS_PER_ELEMENT = 2.5; // mean of 1..4
const MISSING_ANSWERS = ['', 'NULL'] as const;

function maybe<T>(random: Random, pNull: number, value: T): T | null {
  return random.chance(pNull) ? null : value;
}

function ascending(a: number, b: number): number {
  return a - b;
}

/** A malformed answer that still loads (its element holds one): as served, with the field that cannot be read NULL. */
function badSurveyTruth(bad: BadRecord): TruthSurveyResponse {
  const a = (bad.payload.answers as Array<Record<string, unknown>>)[0]!;
  const text = (name: string) => {
    const value = readable(bad, a, name);
    return typeof value === 'string' && value.trim() !== '' && value.trim() !== 'NULL' ? value : null;
  };
  // a bad answer that loads has its date, `YYYY-MM-DD HH:MM:SS UTC`
  const date = a.date as string;
  return {
    customer_id: a.customerId as string,
    answered_at: isoUtc(Date.parse(date.replace(' UTC', 'Z').replace(' ', 'T'))),
    brand: text('brand'),
    branch: text('branch'),
    staff: text('staff'),
    operator: text('operator'),
    receipt: text('receipt'),
    tier_name: text('tierName'),
    first_name: text('first'),
    last_name: text('last'),
    phone: text('phone'),
    email: text('email'),
    questions: bad.payload.questions as Record<string, string>,
    answers: readableTexts(bad, a, 'questAnsMap'),
  };
}

/**
 * `GET /business-data/surveys`. Each day holds a fixed number of `data[]` elements, each one survey's
 * questions with 1–4 answer records of that day. Elements occupy equal time slots of their day, so the
 * served order is also time order, and any position maps to (day, slot) with one binary search.
 * Answers only name customers created on an earlier day, so the first day of data has no answers. With a
 * duplicate rate, some answer records are served twice in a row: exact duplicates, both in the ground truth.
 */
export class SurveyExport implements WindowedExport<TruthSurveyResponse> {
  private readonly goodOffsets: Uint32Array;
  private readonly badOffsets: Uint32Array;
  private readonly totals: Uint32Array;

  constructor(
    private readonly directory: CustomerDirectory,
    answersPerDay: number,
    badRecordRate: number,
    /** Share of answer records served twice, the copy right after the record (`surveyDuplicateRate`). */
    private readonly duplicateRate = 0,
    /** The setup changes the business makes, if any: which surveys it runs on a day. */
    private readonly season: SetupSeason | null = null,
  ) {
    const { seed, calendar } = directory.timeline;
    const days = calendar.dayCount;
    this.goodOffsets = new Uint32Array(days + 1);
    this.badOffsets = new Uint32Array(days + 1);
    this.totals = new Uint32Array(days + 1);
    for (let d = 0; d < days; d++) {
      const jitter = 0.5 + randomFor(seed, Stream.surveysPerDay, d).next();
      const good =
        directory.timeline.firstCreatedOn(d) === 0 ? 0 : Math.round((answersPerDay / ANSWERS_PER_ELEMENT) * jitter);
      const bad = badCountFor(seed, Stream.badSurveysPerDay, d, good, badRecordRate);
      this.goodOffsets[d + 1] = this.goodOffsets[d]! + good;
      this.badOffsets[d + 1] = this.badOffsets[d]! + bad;
      this.totals[d + 1] = this.totals[d]! + good + bad;
    }
  }

  window(first: number, last: number): ExportWindow<TruthSurveyResponse> {
    const base = this.totals[first]!;
    return {
      totalCount: this.totals[last + 1]! - base,
      served: (position) =>
        this.entry(
          base + position,
          (e) => e.served,
          (bad) => bad.payload,
        ),
      canonical: (position) =>
        this.entry<CanonicalEntry<TruthSurveyResponse>>(
          base + position,
          (e) => ({ rows: e.rows }),
          (bad) => {
            if (!bad.unreadable) return { reason: bad.reason };
            const row = badSurveyTruth(bad);
            const { field, raw } = bad.unreadable;
            return {
              rows: [row],
              fieldRejects: [{ customer_id: row.customer_id, field, raw_value: JSON.stringify(raw) }],
            };
          },
        ),
    };
  }

  private entry<R>(
    position: number,
    onGood: (element: Element) => R,
    onBad: (bad: ReturnType<typeof badSurveyElement>) => R,
  ): R {
    const day = this.dayOf(position);
    const slot = position - this.totals[day]!;
    const bad = this.badOffsets[day + 1]! - this.badOffsets[day]!;
    const total = this.totals[day + 1]! - this.totals[day]!;
    const before = badSlotsBefore(slot, bad, total);
    const dayStart = this.directory.timeline.calendar.dayStart(day);
    if (badSlotsBefore(slot + 1, bad, total) > before) {
      const index = this.badOffsets[day]! + before;
      return onBad(
        badSurveyElement(this.directory.timeline.seed, index, dayStart, questionMap(SURVEYS[index % SURVEYS.length]!)),
      );
    }
    return onGood(this.element(this.goodOffsets[day]! + slot - before, day, slot, total));
  }

  /** Element `index` (global), in slot `slot` of the `total` slots of `day`. */
  private element(index: number, day: number, slot: number, total: number): Element {
    const { seed, calendar } = this.directory.timeline;
    const random = randomFor(seed, Stream.surveyElement, index);
    const look = randomFor(seed, Stream.surveyElement, index, 1);
    // a stream of its own: the rate changes which answers repeat, and nothing of the answers themselves
    const twice = randomFor(seed, Stream.surveyDuplicates, index);
    const survey = random.pick(this.season ? this.season.surveysOn(day) : SURVEYS);
    const questions = questionMap(survey);
    const daySeconds = calendar.daySeconds(day);
    const slotStart = calendar.dayStart(day) + Math.floor((slot * daySeconds) / total) * 1000;
    const slotSeconds = Math.max(1, Math.floor(daySeconds / total));
    const times: number[] = [];
    for (let n = random.int(1, 4); n > 0; n--) times.push(slotStart + random.int(0, slotSeconds - 1) * 1000);
    times.sort(ascending);
    const customersBefore = this.directory.timeline.firstCreatedOn(day);
    const answers: Record<string, unknown>[] = [];
    const rows: TruthSurveyResponse[] = [];
    for (let n = 0; n < times.length; n++) {
      const ms = times[n]!;
      const customer = this.directory.base(random.int(0, customersBefore - 1));
      const brand = random.pick(BRANDS);
      const row: TruthSurveyResponse = {
        customer_id: customer.customerId,
        answered_at: isoUtc(ms),
        brand: brand.name,
        branch: random.pick(brand.branches),
        staff: maybe(random, 0.3, random.pick(STAFF)),
        operator: maybe(random, 0.3, random.pick(OPERATORS)),
        receipt: maybe(random, 0.05, `RCP-${index + 1}-${n + 1}`),
        tier_name: maybe(random, 0.05, random.pick(LOYALTY_TIERS).name),
        first_name: maybe(random, 0.1, customer.first),
        last_name: maybe(random, 0.1, customer.last),
        phone: maybe(random, 0.1, customer.phone),
        email: maybe(random, 0.1, customer.email),
        questions,
        answers: dataObject(),
      };
      const questAnsMap = dataObject<string>();
      for (const question of survey.questions) {
        if (random.chance(0.15)) continue; // unanswered questions are left out of the map
        const answer = random.chance(0.08) ? random.pick(MISSING_ANSWERS) : answerOf(question.kind, random.next());
        questAnsMap[question.code] = answer;
        row.answers[question.code] = canonicalText(answer);
      }
      const served = {
        first: renderText(row.first_name, look),
        last: renderText(row.last_name, look),
        phone: renderText(row.phone, look),
        email: renderText(row.email, look),
        brand: row.brand,
        branch: row.branch,
        staff: renderText(row.staff, look),
        operator: renderText(row.operator, look),
        date: renderTimestamp(ms, look, calendar.clock),
        customerId: row.customer_id,
        questAnsMap,
        receipt: renderText(row.receipt, look),
        tierName: renderText(row.tier_name, look),
      };
      answers.push(served);
      rows.push(row);
      if (this.duplicateRate > 0 && twice.chance(this.duplicateRate)) {
        answers.push(served);
        rows.push(row);
      }
    }
    return { served: { answers, questions }, rows };
  }

  /** Day holding global position `position` (the last day whose first position is <= it). */
  private dayOf(position: number): number {
    let lo = 0;
    let hi = this.totals.length - 2;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.totals[mid]! <= position) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}
