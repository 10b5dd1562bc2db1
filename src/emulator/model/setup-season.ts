import type { Random } from './random.js';
import { SURVEYS, type SurveyDefinition, type SurveyQuestion } from './survey-catalog.js';

/** Days between the steps of a season of setup changes. */
export const SEASON_STEP_DAYS = 3;

/** The custom field the season adds: visits a month, numbers at first, then free text. */
export const SEASON_VISITS_FIELD = 'visits';
/** The field the season removes: no version after its start holds it. */
export const SEASON_REMOVED_FIELD = 'Favourite Store';
/** The field the season renames, and its new name: a version after the start holds its value under the new one. */
export const SEASON_RENAMED_FIELD = { from: 'favourite_store', to: 'favouriteStoreApp' } as const;

/** The question the season adds to the first survey: an ISO day at first, then free text. */
export const SEASON_QUESTION: SurveyQuestion = { text: 'When did you last visit us?', code: 'last_visit', kind: 'day' };
/** The question of the first survey the season drops at its third step. */
export const SEASON_DROPPED_QUESTION = 'Food Quality';

const VISIT_WORDS = ['a few', 'weekly', 'often', 'not sure', 'twice or so'];

/**
 * A season in which the emulated business changes its setup, one step every {@link SEASON_STEP_DAYS} days from its
 * first day (a day index of the data): what a warehouse's analysts must see recorded, never break under.
 *
 * - step 1 (from the first day): the first survey gains {@link SEASON_QUESTION}, answered with ISO days; custom fields:
 *   {@link SEASON_VISITS_FIELD} appears (whole numbers), {@link SEASON_REMOVED_FIELD} is removed and
 *   {@link SEASON_RENAMED_FIELD} renamed;
 * - step 2: the new question's answers and the visits become free text (past the typing rule);
 * - step 3: the first survey drops {@link SEASON_DROPPED_QUESTION}.
 */
export class SetupSeason {
  constructor(readonly start: number) {}

  /** 0 before the season, then 1, 2, 3 by the step `day` falls in. */
  step(day: number): number {
    if (day < this.start) return 0;
    return Math.min(3, 1 + Math.floor((day - this.start) / SEASON_STEP_DAYS));
  }

  /** The surveys the business runs on `day`. */
  surveysOn(day: number): readonly SurveyDefinition[] {
    const step = this.step(day);
    if (step === 0) return SURVEYS;
    const [first, ...others] = SURVEYS as [SurveyDefinition, ...SurveyDefinition[]];
    const asked = step >= 3 ? first.questions.filter((q) => q.code !== SEASON_DROPPED_QUESTION) : first.questions;
    const added: SurveyQuestion = { ...SEASON_QUESTION, kind: step >= 2 ? 'day-in-words' : 'day' };
    return [{ ...first, questions: [...asked, added] }, ...others];
  }

  /** The custom fields of a version made on `day`, from those the pool's rules gave it. */
  fieldsOn(day: number, fields: Map<string, string | null>, random: Random): Map<string, string | null> {
    const step = this.step(day);
    if (step === 0) return fields;
    const out = new Map(fields);
    out.delete(SEASON_REMOVED_FIELD);
    if (out.has(SEASON_RENAMED_FIELD.from)) {
      out.set(SEASON_RENAMED_FIELD.to, out.get(SEASON_RENAMED_FIELD.from)!);
      out.delete(SEASON_RENAMED_FIELD.from);
    }
    // drawn after every other field, so those are what they would be without the season
    const visits = random.next();
    out.set(
      SEASON_VISITS_FIELD,
      step >= 2 ? VISIT_WORDS[Math.floor(visits * VISIT_WORDS.length)]! : String(1 + Math.floor(visits * 30)),
    );
    return out;
  }
}
