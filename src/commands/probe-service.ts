import { isDeepStrictEqual } from 'node:util';
import { addDays, type Day } from '../plan/days.js';
import type { HttpClient, RawAnswer } from '../source/http-client.js';
import { AuthenticationError, DataNotFoundError } from '../source/source-errors.js';
import { LoyaltyApi } from '../source/loyalty-api.js';
import type { ChoiceListForm } from '../transform/choice-lists.js';
import { isMissingText } from '../transform/values.js';
import type { Finding } from './probe-finding.js';
import { capOf, describeAnswer, json, LISTED, type Page } from './probe-answers.js';
import { multipleChoiceFinding } from './probe-choice-lists.js';
import { RecordSample } from './probe-records.js';
import { rangeWithAnswers, type ProbeRange } from './probe-range.js';

export type { Finding } from './probe-finding.js';

/** What the probe reads of the config. */
export interface ProbeSettings {
  /** The last day it looks at (the last closed day in the source's zone). */
  through: Day;
  /** The first day it may look back to when the 30 days through `through` hold nothing (`source.history_start`, or an earlier `first_day`). */
  from: Day;
  timezone: string;
  pageSize: number;
  exportEnd: 'inclusive' | 'exclusive';
  firstPage: 0 | 1;
  multipleChoice: ChoiceListForm;
}

/** The requests the probe may make, at most. */
export const PROBE_BUDGET = 100;

/** The probe ran out of requests before it could settle a finding. */
class BudgetSpent extends Error {}

/** A phone no customer can have: the service is asked about a customer that cannot exist. */
const NO_SUCH_PHONE = '+000000000000000';

/**
 * First contact with a service: finds, in at most {@link PROBE_BUDGET} requests made through the source client at
 * its configured pace, how the service reads each convention the spec leaves open. Read-only: only GETs.
 */
export class ServiceProbe {
  private requests = 0;
  private readonly findings: Finding[] = [];
  private readonly sample = new RecordSample(() => LISTED);
  /** The custom field values of the accounts read, by field name: what the multiple-choice finding reads. */
  private readonly fieldValues = new Map<string, Set<string>>();

  constructor(
    private readonly api: LoyaltyApi<HttpClient>,
    private readonly settings: ProbeSettings,
  ) {}

  /** Requests made so far. */
  get requestCount(): number {
    return this.requests;
  }

  async run(): Promise<Finding[]> {
    const { through, from } = this.settings;
    const count = async (r: ProbeRange) => {
      const p = await this.page('/business-data/surveys', { ...r, page: this.settings.firstPage, size: 1 });
      return p.ok ? p.totalCount : null;
    };
    const found = await rangeWithAnswers(count, from, through);
    const { range } = found;
    this.findings.push({
      name: 'days looked at',
      service: found.lastAnswerDay
        ? `${range.start}..${range.end}: the 30 days through ${through} hold no survey answers; the last day with one is ${found.lastAnswerDay}`
        : found.anyAnswers
          ? `${range.start}..${range.end}`
          : `${range.start}..${range.end}: no survey answers from ${from} through ${through}`,
      config: null,
      verdict: found.anyAnswers ? 'seen' : 'unsettled',
    });
    const first = await this.firstPage(range);
    for (const step of [
      () => this.exportEnd(range, first),
      () => this.pageSize(range, first),
      () => this.errors(range, first),
      () => this.accounts(first, range.end),
      () => this.multipleChoice(),
      () => this.perCustomer(first),
    ]) {
      try {
        await step();
      } catch (error) {
        if (!(error instanceof BudgetSpent)) throw error;
        this.findings.push({
          name: 'the rest',
          service: `not settled: the probe's ${PROBE_BUDGET} requests are spent`,
          config: null,
          verdict: 'unsettled',
        });
        break;
      }
    }
    this.findings.push(...this.sample.findings(this.settings.timezone));
    return this.findings;
  }

  /** Pages are numbered from 0 or from 1: page 0 refused or empty, or the same as page 1, says 1. */
  private async firstPage(range: { start: Day; end: Day }): Promise<0 | 1> {
    const config = String(this.settings.firstPage);
    const one = await this.page('/business-data/surveys', { start: range.start, end: range.end, page: 1, size: 1 });
    const zero = await this.page('/business-data/surveys', { start: range.start, end: range.end, page: 0, size: 1 });
    const records = (p: Page) => (p.ok ? p.data.length : 0);
    let found: 0 | 1 | undefined;
    if (!zero.ok || records(zero) === 0) found = one.ok && records(one) > 0 ? 1 : undefined;
    else if (!one.ok || records(one) === 0) found = 0;
    else if (!isDeepStrictEqual(zero.data, one.data)) found = 0;
    else if (one.totalCount >= 2) found = 1;
    for (const p of [one, zero]) if (p.ok) this.sample.surveys(p.data);
    if (found === undefined) {
      this.findings.push({
        name: 'first page number',
        service: `not settled: no survey answers from ${range.start} to ${range.end}`,
        config,
        verdict: 'unsettled',
      });
      return this.settings.firstPage;
    }
    const evidence =
      found === 1
        ? zero.ok
          ? 'page 0 holds nothing of its own'
          : `page 0 answered HTTP ${zero.answer.status}`
        : 'page 0 holds the first record';
    this.findings.push(
      this.compare('first page number', `${found} (${evidence})`, String(found), config, `first_page: ${found}`),
    );
    return found;
  }

  /** Whether an export's `end` day is included: single-day ranges around a day with an answer hold it, or none does. */
  private async exportEnd(range: { start: Day; end: Day }, first: 0 | 1): Promise<void> {
    const config = this.settings.exportEnd;
    const day = this.sample.answerDay();
    if (day === undefined) {
      this.findings.push({
        name: 'export end day',
        service: `not settled: no survey answers from ${range.start} to ${range.end}`,
        config,
        verdict: 'unsettled',
      });
      return;
    }
    const count = async (start: Day, end: Day) => {
      const p = await this.page('/business-data/surveys', { start, end, page: first, size: 1 });
      return p.ok ? p.totalCount : 0;
    };
    // the answer's day in its own label may be a day off in the source's zone: one of three days holds it
    const single = [
      await count(addDays(day, -1), addDays(day, -1)),
      await count(day, day),
      await count(addDays(day, 1), addDays(day, 1)),
    ];
    const across = await count(addDays(day, -1), addDays(day, 2));
    let found: 'inclusive' | 'exclusive' | undefined;
    if (single.some((n) => n > 0)) found = 'inclusive';
    else if (across > 0) found = 'exclusive';
    if (found === undefined) {
      this.findings.push({
        name: 'export end day',
        service: `not settled: the days around ${day} hold no answers`,
        config,
        verdict: 'unsettled',
      });
      return;
    }
    const evidence =
      found === 'inclusive'
        ? `single-day ranges around ${day} hold ${single.join(', ')} answers`
        : `every single-day range around ${day} holds none; ${addDays(day, -1)}..${addDays(day, 2)} holds ${across}`;
    this.findings.push(this.compare('export end day', `${found} (${evidence})`, found, config, `export_end: ${found}`));
  }

  /** The configured page size is served whole, and how a larger one is served (refused, or silently capped). */
  private async pageSize(range: { start: Day; end: Day }, first: 0 | 1): Promise<void> {
    const size = this.settings.pageSize;
    const query = { start: range.start, end: range.end, page: first };
    const asked = await this.page('/business-data/surveys', { ...query, size });
    if (!asked.ok) {
      this.findings.push({
        name: 'page size',
        service: `a page of ${size} is refused (HTTP ${asked.answer.status}): the service takes fewer records a page`,
        config: String(size),
        verdict: 'differs',
        set: ['page_size: 100'],
      });
      return;
    }
    this.sample.surveys(asked.data);
    const served = capOf(asked, size);
    if (served !== null) {
      const service =
        served === 'one page'
          ? `not settled: the ${asked.data.length} records of the range fit one page`
          : `served ${served} records a page when ${size} were asked for`;
      this.findings.push(
        served === 'one page'
          ? { name: 'page size', service, config: String(size), verdict: 'unsettled' }
          : this.compare('page size', service, String(served), String(size), `page_size: ${served}`),
      );
      return;
    }
    const larger = 1000;
    if (size >= larger) {
      this.findings.push({
        name: 'page size',
        service: `a page of ${size} is served whole`,
        config: String(size),
        verdict: 'agrees',
      });
      return;
    }
    const big = await this.page('/business-data/surveys', { ...query, size: larger });
    const cap = big.ok ? capOf(big, larger) : null;
    const beyond = !big.ok
      ? `a page of ${larger} is refused (HTTP ${big.answer.status})`
      : cap === null
        ? `a page of ${larger} is served whole`
        : cap === 'one page'
          ? `a page of ${larger} holds all ${big.data.length} records of the range`
          : `a page of ${larger} is silently served ${cap} records`;
    this.findings.push({
      name: 'page size',
      service: `a page of ${size} is served whole; ${beyond}`,
      config: String(size),
      verdict: 'agrees',
    });
  }

  /** How a 1xxx error and a 400 arrive, and whether the pipeline's client takes the 1xxx one for what it is. */
  private async errors(range: { start: Day; end: Day }, first: 0 | 1): Promise<void> {
    const missing = await this.exchange('/accounts/loyalty/postings', {
      phone: NO_SUCH_PHONE,
      pageNumber: first,
      pageSize: 10,
    });
    const shape = describeAnswer(missing);
    // the client as the pipeline uses it, pages numbered as found (it counts them from 1 itself)
    this.spend();
    const understood = await new LoyaltyApi(this.api.http, { firstPage: first })
      .postingsPage({ customerId: '(probe)', phone: NO_SUCH_PHONE, email: null }, 1, 10)
      .then(
        () => 'answered as a page',
        (error: unknown) =>
          error instanceof DataNotFoundError ? undefined : error instanceof Error ? error.message : String(error),
      );
    this.findings.push({
      name: 'error answer (1005)',
      service: `postings of a customer that cannot exist: ${shape}`,
      config: null,
      verdict: understood === undefined ? 'seen' : 'differs',
      ...(understood === undefined
        ? {}
        : {
            set: [
              `# the pipeline does not read this answer as 1005 Data Not Found (${understood}); nothing in jobs.yaml changes that`,
            ],
          }),
    });
    const bad = await this.exchange('/business-data/surveys', {
      start: 'not-a-day',
      end: range.end,
      page: first,
      size: 1,
    });
    this.findings.push({
      name: 'error answer (400)',
      service: `a range starting "not-a-day": ${describeAnswer(bad)}`,
      config: null,
      verdict: 'seen',
    });
  }

  /** The accounts export over two weeks a few weeks apart: listing semantics, order stability, fields. */
  private async accounts(first: 0 | 1, through: Day): Promise<void> {
    const size = Math.min(this.settings.pageSize, 200);
    const windows = [
      { start: addDays(through, -29), end: addDays(through, -23) },
      { start: addDays(through, -6), end: through },
    ];
    for (const window of windows) {
      for (let n = 0; n < 2; n++) {
        const p = await this.page('/business-data/accounts', { ...window, page: first + n, size });
        if (!p.ok) break;
        this.sample.accounts(window, p.data);
        this.keepFieldValues(p.data);
        if ((n + 1) * size >= p.totalCount) break;
      }
    }
    // the same page asked twice: a listing whose order changes between requests cannot be paged by offset alone
    const again = windows[0]!;
    const a = await this.page('/business-data/accounts', { ...again, page: first, size: Math.min(size, 50) });
    const b = await this.page('/business-data/accounts', { ...again, page: first, size: Math.min(size, 50) });
    if (!a.ok || !b.ok || a.data.length < 2) {
      this.findings.push({
        name: 'listing order',
        service: `not settled: ${again.start}..${again.end} lists fewer than 2 accounts`,
        config: null,
        verdict: 'unsettled',
      });
    } else {
      const same = isDeepStrictEqual(a.data, b.data);
      this.findings.push({
        name: 'listing order',
        service: same
          ? `stable: the same page asked twice listed the same ${a.data.length} accounts in the same order`
          : 'changes between two requests of the same page: the pipeline proves every listing it pages and reads it again when pages overlap',
        config: null,
        verdict: 'seen',
      });
    }
    this.findings.push(this.sample.listingFinding());
  }

  private keepFieldValues(records: unknown[]): void {
    for (const record of records) {
      const map = (record as { customFieldMap?: unknown } | null)?.customFieldMap;
      if (!map || typeof map !== 'object') continue;
      for (const [name, value] of Object.entries(map))
        if (typeof value === 'string' && !isMissingText(value))
          this.fieldValues.set(name, (this.fieldValues.get(name) ?? new Set()).add(value));
    }
  }

  /** How a multiple-choice field's options travel in one string, from the main profile's fields (two requests). */
  private async multipleChoice(): Promise<void> {
    const profiles = json(await this.exchange('/accounts/profiles/', {}));
    const main = Array.isArray(profiles)
      ? ((profiles as Array<{ id?: unknown; main?: unknown }>).find((p) => String(p.main) === 'true') ?? profiles[0])
      : undefined;
    const profile = main ? json(await this.exchange(`/accounts/profiles/${String(main.id)}`, {})) : undefined;
    const fields = (profile as { profileFields?: unknown } | undefined)?.profileFields;
    this.findings.push(multipleChoiceFinding(fields, this.fieldValues, this.settings.multipleChoice));
  }

  /** Postings, loyalty state and vouchers of a few customers the accounts export listed. */
  private async perCustomer(first: 0 | 1): Promise<void> {
    for (const customer of this.sample.customers(3)) {
      const who: Record<string, string> = customer.phone ? { phone: customer.phone } : { email: customer.email ?? '' };
      const postings = await this.page('/accounts/loyalty/postings', { ...who, pageNumber: first, pageSize: 20 });
      if (postings.ok) this.sample.postings(postings.data);
      const loyalty = json(await this.exchange('/accounts', { ...who, includeLoyalty: 'true' }));
      if (loyalty && typeof loyalty === 'object' && 'loyalty' in loyalty)
        this.sample.loyalty((loyalty as { loyalty: unknown }).loyalty);
      const vouchers = json(await this.exchange('/accounts/vouchers/get', who));
      if (Array.isArray(vouchers)) this.sample.vouchers(vouchers);
    }
  }

  /** An answer read as a listing page (a number may come as digits); anything else is kept as it came. */
  private async page(path: string, query: Record<string, string | number>): Promise<Page> {
    const answer = await this.exchange(path, query);
    const body = answer.status >= 200 && answer.status < 300 ? json(answer) : undefined;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return { ok: false, answer };
    const b = body as Record<string, unknown>;
    const [pageNumber, pageSize, totalCount] = [b.pageNumber, b.pageSize, b.totalCount].map((v) =>
      typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v,
    );
    if (!Array.isArray(b.data) || typeof totalCount !== 'number') return { ok: false, answer };
    return { ok: true, pageNumber: Number(pageNumber), pageSize: Number(pageSize), totalCount, data: b.data };
  }

  private async exchange(path: string, query: Record<string, string | number>): Promise<RawAnswer> {
    this.spend();
    const answer = await this.api.http.exchange(path, query, `probe ${path}`);
    if (answer.status === 401 || answer.status === 403)
      throw new AuthenticationError(
        `${path}: HTTP ${answer.status} not authorized (check source.auth and LOYALTY_API_TOKEN)`,
        path,
        answer.status,
      );
    return answer;
  }

  private spend(): void {
    if (this.requests >= PROBE_BUDGET) throw new BudgetSpent();
    this.requests++;
  }

  private compare(name: string, service: string, found: string, config: string, line: string): Finding {
    return found === config
      ? { name, service, config, verdict: 'agrees' }
      : { name, service, config, verdict: 'differs', set: [line] };
  }
}
