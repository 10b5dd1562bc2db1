import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import type { Emulator } from '../../src/emulator/index.js';
import { FIRST_DAY, LAST_DAY, ZONE, allPages, dayOf, readTimestamp, start } from './emulator-fixture.js';

describe('surveys export', () => {
  let emulator: Emulator;
  let everything: any[];
  beforeAll(async () => {
    emulator = await start();
    everything = (await allPages(emulator, 'surveys', FIRST_DAY, LAST_DAY, 1000)).records;
  });
  afterAll(() => emulator.close());

  it('pages cover exactly totalCount elements with no repeats', async () => {
    const { totalCount, records } = await allPages(emulator, 'surveys', '2024-09-01', '2024-09-30', 7);
    expect(totalCount).toBeGreaterThan(50);
    expect(records).toHaveLength(totalCount);
    expect(new Set(records.map((r) => JSON.stringify(r))).size).toBe(totalCount);
  });

  it('splits a range into windows without losing or repeating an element', async () => {
    const parts = [];
    for (const [s, e] of [
      ['2024-09-01', '2024-09-10'],
      ['2024-09-11', '2024-09-11'],
      ['2024-09-12', '2024-09-30'],
    ]) {
      parts.push(...(await allPages(emulator, 'surveys', s!, e!, 10)).records);
    }
    const whole = (await allPages(emulator, 'surveys', '2024-09-01', '2024-09-30', 1000)).records;
    expect(parts).toEqual(whole);
  });

  it('holds one survey per element with 1–4 answers dated in the window, in time order', async () => {
    const surveys = emulator.truth.surveys().map((s) => JSON.stringify(s.questions));
    const { records } = await allPages(emulator, 'surveys', '2024-10-05', '2024-10-09', 100);
    const times: string[] = [];
    for (const element of records) {
      expect(surveys).toContain(JSON.stringify(element.questions));
      expect(element.answers.length).toBeGreaterThanOrEqual(1);
      expect(element.answers.length).toBeLessThanOrEqual(4);
      const codes = Object.values(element.questions);
      for (const answer of element.answers) {
        const at = readTimestamp(answer.date)!;
        expect(dayOf(at) >= '2024-10-05' && dayOf(at) <= '2024-10-09').toBe(true);
        times.push(at);
        for (const code of Object.keys(answer.questAnsMap)) expect(codes).toContain(code);
      }
    }
    expect(times).toEqual([...times].sort());
  });

  it('names only customers created before the answer', async () => {
    for (const element of everything.slice(0, 200)) {
      for (const answer of element.answers) {
        const day = DateTime.fromISO(readTimestamp(answer.date)!, { zone: ZONE }).minus({ days: 1 }).toISODate()!;
        const known = new Set([...emulator.truth.customers(day)].map((c) => c.customer_id));
        expect(known.has(answer.customerId)).toBe(true);
      }
    }
  });

  it('has every quirk: missing forms, omitted codes, both timestamp shapes, grouped elements', () => {
    const answers = everything.flatMap((e) => e.answers);
    const values = answers.flatMap((a) => [
      a.first,
      a.last,
      a.phone,
      a.email,
      a.staff,
      a.operator,
      a.receipt,
      a.tierName,
    ]);
    expect(values).toContain(null);
    expect(values).toContain('NULL');
    expect(values).toContain('');
    const answerValues = answers.flatMap((a) => Object.values(a.questAnsMap));
    expect(answerValues).toContain('');
    expect(answerValues).toContain('NULL');
    const partial = everything.some((e) =>
      e.answers.some((a: any) => Object.keys(a.questAnsMap).length < Object.keys(e.questions).length),
    );
    expect(partial).toBe(true);
    expect(answers.some((a) => a.date.endsWith(' UTC'))).toBe(true);
    expect(answers.some((a) => !a.date.endsWith(' UTC'))).toBe(true);
    expect(everything.some((e) => e.answers.length > 1)).toBe(true);
    const questionSets = new Set(everything.map((e) => JSON.stringify(e.questions)));
    expect(questionSets.size).toBe(emulator.truth.surveys().length);
    expect(everything.length).toBeGreaterThan(questionSets.size);
  });

  it('has question codes that need sanitizing and texts with quotes and unicode', () => {
    const questions = emulator.truth.surveys().flatMap((s) => Object.entries(s.questions));
    expect(questions.some(([, code]) => /[^a-z0-9_]/.test(code))).toBe(true);
    expect(questions.some(([text]) => text.includes('"'))).toBe(true);
    // eslint-disable-next-line no-control-regex -- the whole ASCII range, NUL included
    expect(questions.some(([text]) => /[^\x00-\x7f]/.test(text))).toBe(true);
  });

  it('has no answers on the first day, before any customer existed', async () => {
    const { totalCount } = await allPages(emulator, 'surveys', FIRST_DAY, FIRST_DAY);
    expect(totalCount).toBe(0);
  });

  it('mixes in malformed elements, each listed as a reject or loading with the field it spoils NULL', async () => {
    const noisy = await start({ badRecordRate: 0.3 });
    try {
      const { records } = await allPages(noisy, 'surveys', FIRST_DAY, LAST_DAY, 500);
      const rejects = [...noisy.truth.rejects('surveys', FIRST_DAY, LAST_DAY)];
      expect(rejects.length).toBeGreaterThan(10);
      const answers = (e: any) => (Array.isArray(e.answers) ? e.answers : []);
      const broken = (a: any) =>
        typeof a.questAnsMap !== 'object' ||
        Object.values(a.questAnsMap).some((v) => v !== null && typeof v === 'object');
      const unkeyed = records.filter(
        (e) =>
          !Array.isArray(e.answers) ||
          typeof e.questions !== 'object' ||
          e.answers.some((a: any) => typeof a.customerId !== 'string' || !/^\d{4}-/.test(a.date)),
      );
      expect(unkeyed).toEqual(rejects.map((r) => r.payload));
      // the others load: every answer of the keyed elements is in the truth, a spoiled one with its field said
      const loaded = records.filter((e) => !unkeyed.includes(e));
      const spoiled = loaded.flatMap(answers).filter(broken);
      expect(spoiled.length).toBeGreaterThan(10);
      const fields = [...noisy.truth.fieldRejects('surveys', FIRST_DAY, LAST_DAY)];
      expect(fields.map((f) => f.customer_id)).toEqual(spoiled.map((a: any) => a.customerId));
      expect(new Set(fields.map((f) => f.field))).toEqual(new Set(['questAnsMap', 'questAnsMap.comments']));
      expect([...noisy.truth.surveyResponses(FIRST_DAY, LAST_DAY)]).toHaveLength(loaded.flatMap(answers).length);
      expect(records.length - rejects.length).toBe(everything.length + spoiled.length);
    } finally {
      await noisy.close();
    }
  });

  it('serves a share of answers twice, right after themselves, and lists both in the truth; nothing else changes', async () => {
    const twice = await start({ surveyDuplicateRate: 0.2 });
    try {
      const { records } = await allPages(twice, 'surveys', FIRST_DAY, LAST_DAY, 500);
      expect(records).toHaveLength(everything.length); // the same elements
      let copies = 0;
      for (const [i, element] of records.entries()) {
        expect(element.questions).toEqual(everything[i].questions);
        // the answers of the element without its repeats are the answers served without duplicates
        const once = element.answers.filter(
          (a: unknown, n: number) => n === 0 || JSON.stringify(a) !== JSON.stringify(element.answers[n - 1]),
        );
        expect(once).toEqual(everything[i].answers);
        copies += element.answers.length - once.length;
      }
      const answers = everything.reduce((n, e) => n + e.answers.length, 0);
      expect(copies).toBeGreaterThan(answers * 0.1);
      expect(copies).toBeLessThan(answers * 0.3);
      const truth = [...twice.truth.surveyResponses(FIRST_DAY, LAST_DAY)].map((r) => JSON.stringify(r));
      expect(truth).toHaveLength(answers + copies);
      expect(truth.length - new Set(truth).size).toBe(copies);
    } finally {
      await twice.close();
    }
  });
});
