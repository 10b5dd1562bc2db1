import type { ResolvedEmulatorOptions } from '../emulator-options.js';
import { AccountExport } from './account-export.js';
import { Calendar, parseDay } from './calendar.js';
import { ChangeLog } from './change-log.js';
import { CustomerDirectory } from './customer-directory.js';
import { CustomerTimeline } from './customer-timeline.js';
import { LocalDays } from './local-days.js';
import { PostingLedger } from './posting-ledger.js';
import { SetupSeason } from './setup-season.js';
import { SurveyExport } from './survey-export.js';
import { ZoneClock } from './zone-clock.js';

/** How many years before the data range customers' `customerSince` may reach back for clock changes. */
const DST_YEARS_BACK = 8;

/** Everything the emulated source holds, wired from resolved options. Built once at start-up. */
export class SourceData {
  readonly calendar: Calendar;
  /** Local calendar days of the zone, for the loyalty and voucher rules. */
  readonly days: LocalDays;
  readonly timeline: CustomerTimeline;
  readonly changes: ChangeLog;
  readonly directory: CustomerDirectory;
  readonly accounts: AccountExport;
  readonly surveys: SurveyExport;
  readonly postings: PostingLedger;

  constructor(readonly options: ResolvedEmulatorOptions) {
    const clock = new ZoneClock(options.timezone);
    this.calendar = new Calendar(clock, options.startDate, options.endDate);
    this.days = new LocalDays(clock);
    this.timeline = new CustomerTimeline(options.seed, options.accounts, this.calendar);
    this.changes = new ChangeLog(this.timeline);
    const firstYear = Number(options.startDate.slice(0, 4));
    const season = options.setupSeason
      ? new SetupSeason(parseDay(options.setupSeason)! - parseDay(options.startDate)!)
      : null;
    this.directory = new CustomerDirectory(
      this.timeline,
      clock.transitions(firstYear - DST_YEARS_BACK, firstYear - 1),
      options.contactlessRate,
      season,
    );
    this.accounts = new AccountExport(this.changes, this.directory, options.badRecordRate);
    this.surveys = new SurveyExport(
      this.directory,
      options.surveysPerDay,
      options.badRecordRate,
      options.surveyDuplicateRate,
      season,
    );
    this.postings = new PostingLedger(this.directory, this.calendar.dayStart(this.calendar.dayCount), this.days);
  }

  /** Customer index for a phone or e-mail (phone first), or -1 when neither finds one. */
  findCustomer(phone: string | null, email: string | null): number {
    const byPhone = phone ? this.directory.findByPhone(phone) : -1;
    return byPhone >= 0 || !email ? byPhone : this.directory.findByEmail(email);
  }
}
