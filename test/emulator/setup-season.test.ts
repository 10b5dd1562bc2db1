import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorOptions } from '../../src/commands/emulator.js';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import {
  SEASON_DROPPED_QUESTION,
  SEASON_QUESTION,
  SEASON_REMOVED_FIELD,
  SEASON_RENAMED_FIELD,
  SEASON_VISITS_FIELD,
} from '../../src/emulator/model/setup-season.js';
import { SURVEYS } from '../../src/emulator/model/survey-catalog.js';

const LABEL = SURVEYS[0]!.questions[0]!.text;
const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;

describe('a season of setup changes in the emulator', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({
      seed: 5,
      accounts: 300,
      startDate: '2024-03-01',
      endDate: '2024-03-16',
      setupSeason: '2024-03-06',
      surveysPerDay: 60,
      port: 0,
    });
  });
  afterAll(async () => {
    await emulator.close();
  });

  /** The first survey's answers to `code` of the days `from`..`to`, and the codes its question sets held. */
  function firstSurvey(from: string, to: string, code: string) {
    const rows = [...emulator.truth.surveyResponses(from, to)].filter((r) => Object.keys(r.questions)[0] === LABEL);
    return {
      answers: rows.map((r) => r.answers[code]).filter((a): a is string => typeof a === 'string'),
      codes: new Set(rows.flatMap((r) => Object.values(r.questions))),
    };
  }

  /** The values of `field` in the account versions the export serves for `from`..`to`. */
  function fieldValues(from: string, to: string, field: string): string[] {
    return [...emulator.truth.accounts(from, to)]
      .map((a) => a.custom_fields[field])
      .filter((v): v is string => typeof v === 'string');
  }

  it('adds a question answered with days, turns its answers to words, then drops another question', () => {
    const before = firstSurvey('2024-03-01', '2024-03-05', SEASON_QUESTION.code);
    expect(before.codes.has(SEASON_QUESTION.code)).toBe(false);
    const first = firstSurvey('2024-03-06', '2024-03-08', SEASON_QUESTION.code);
    expect(first.answers.length).toBeGreaterThan(0);
    expect(first.answers.every((a) => ISO_DAY.test(a))).toBe(true);
    expect(first.codes.has(SEASON_DROPPED_QUESTION)).toBe(true);
    const second = firstSurvey('2024-03-09', '2024-03-11', SEASON_QUESTION.code);
    expect(second.answers.length).toBeGreaterThan(0);
    expect(second.answers.some((a) => ISO_DAY.test(a))).toBe(false);
    const third = firstSurvey('2024-03-12', '2024-03-16', SEASON_QUESTION.code);
    expect(third.codes.has(SEASON_DROPPED_QUESTION)).toBe(false);
    expect(third.codes.has(SEASON_QUESTION.code)).toBe(true);
  });

  it('adds a field of numbers that become words, removes one and renames another', () => {
    expect(fieldValues('2024-03-01', '2024-03-05', SEASON_VISITS_FIELD)).toEqual([]);
    const numbers = fieldValues('2024-03-06', '2024-03-08', SEASON_VISITS_FIELD);
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers.every((v) => /^\d+$/.test(v))).toBe(true);
    const words = fieldValues('2024-03-09', '2024-03-11', SEASON_VISITS_FIELD);
    expect(words.length).toBeGreaterThan(0);
    expect(words.some((v) => /^\d+$/.test(v))).toBe(false);
    expect(fieldValues('2024-03-01', '2024-03-05', SEASON_REMOVED_FIELD).length).toBeGreaterThan(0);
    expect(fieldValues('2024-03-06', '2024-03-16', SEASON_REMOVED_FIELD)).toEqual([]);
    expect(fieldValues('2024-03-06', '2024-03-16', SEASON_RENAMED_FIELD.from)).toEqual([]);
    expect(fieldValues('2024-03-06', '2024-03-16', SEASON_RENAMED_FIELD.to).length).toBeGreaterThan(0);
  });

  it('takes the season from the command line, and refuses a day that is none', () => {
    const base = { seed: '1', accounts: '10' };
    expect(emulatorOptions({ ...base, setupSeason: '2024-03-06' }).setupSeason).toBe('2024-03-06');
    expect(() => emulatorOptions({ ...base, setupSeason: 'March' })).toThrow('--setup-season: March is not a day');
  });
});
