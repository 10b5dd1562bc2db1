import { statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AnswerArchive, readSpan } from '../../src/source/archive/answer-archive.js';
import { ArchivedSource } from '../../src/source/archive/archived-source.js';
import { ARCHIVE_BATCH_BYTES } from '../../src/source/archive/span-archive.js';
import { LoyaltyApi } from '../../src/source/loyalty-api.js';
import { DataNotFoundError, FatalSourceError } from '../../src/source/source-errors.js';
import { testTempDir } from '../helpers/temp-dir.js';

const WINDOW = [{ start: '2024-05-01', end: '2024-05-01' }];

function page(i: number) {
  return {
    path: '/business-data/accounts',
    query: { start: '2024-05-01', end: '2024-05-01', page: String(i), size: '50' },
    status: 200,
    body: `{"n":${i}}`,
    at: '2024-05-02T08:00:00.000Z',
  };
}

describe('the raw archive', () => {
  it('reads every whole line of a span whose last gzip member a kill cut, and a span cut before its header as none', async () => {
    const archive = new AnswerArchive(join(testTempDir('archive-'), 'a'));
    const span = archive.openSpan({ job: 'nightly', stream: 'accounts', runId: 'r1', windows: WINDOW, pageSize: 50 });
    const answers = 3 * Math.ceil(ARCHIVE_BATCH_BYTES / 150); // three members at least
    for (let i = 1; i <= answers; i++) span.keep({ ...page(i), body: `{"n":${i},"pad":"${'x'.repeat(100)}"}` });
    await span.seal();
    const whole = (await readSpan(span.file))!;
    expect(whole.answers).toHaveLength(answers);
    expect(whole.committed).toBe(false);
    const size = statSync(span.file).size;
    truncateSync(span.file, size - 100);
    const cut = (await readSpan(span.file))!;
    expect(cut.answers.length).toBeGreaterThan(0);
    expect(cut.answers.length).toBeLessThan(answers);
    expect(cut.answers).toEqual(whole.answers.slice(0, cut.answers.length));
    truncateSync(span.file, 12);
    expect(await readSpan(span.file)).toBeUndefined();
    await span.close(); // a handle left open is closed by the collector, with a warning in whatever test runs then
  });

  it('marks a span committed, and keeps its customers and answers in order', async () => {
    const archive = new AnswerArchive(join(testTempDir('archive-'), 'a'));
    const span = archive.openSpan({ job: 'nightly', stream: 'vouchers', runId: 'r1', windows: WINDOW, pageSize: 50 });
    span.customer({ customerId: 'C1', phone: '+30 1', email: null });
    span.keep({
      path: '/accounts/vouchers/get',
      query: { phone: '+30 1' },
      status: 200,
      body: '[]',
      at: '2024-05-02T08:00:00.000Z',
    });
    await span.seal();
    await span.committed();
    const read = (await readSpan(span.file))!;
    expect(read).toMatchObject({
      committed: true,
      customers: [{ customerId: 'C1', phone: '+30 1', email: null }],
      header: { stream: 'vouchers', pageSize: 50 },
    });
    expect(read.answers).toHaveLength(1);
    expect((await archive.usage()).files).toBe(1);
  });

  it('deletes spans past their age, then the oldest past the size, and reports what is left', async () => {
    const root = join(testTempDir('archive-'), 'a');
    const files: string[] = [];
    for (let i = 0; i < 4; i++) {
      const span = new AnswerArchive(root).openSpan({
        job: 'nightly',
        stream: 'accounts',
        runId: `r${i}`,
        windows: WINDOW,
        pageSize: 50,
      });
      span.keep(page(i));
      await span.committed();
      files.push(span.file);
      await new Promise((r) => setTimeout(r, 5)); // a later name
    }
    const bySize = new AnswerArchive(root, { maxBytes: statSync(files[2]!).size + statSync(files[3]!).size });
    expect(await bySize.prune()).toBe(2);
    expect((await bySize.spanFiles('nightly')).map((f) => f.file)).toEqual(files.slice(2));
    const byAge = new AnswerArchive(root, { keepDays: 1 });
    expect(await byAge.prune(new Date(Date.now() + 2 * 86_400_000))).toBe(2);
    expect(await byAge.usage()).toMatchObject({ files: 0, bytes: 0 });
  });
});

describe('a source answering from the archive', () => {
  it('answers each request with its kept answers in order, reads a kept 1005 as no data, and refuses a request never asked', async () => {
    const source = new ArchivedSource({
      header: {
        job: 'nightly',
        stream: 'accounts',
        runId: 'r',
        windows: WINDOW,
        pageSize: 50,
        opened: '2024-05-02T08:00:00.000Z',
      },
      customers: [],
      committed: true,
      answers: [
        { ...page(1), body: '{"pageNumber":1,"pageSize":50,"totalCount":1,"data":[{"a":1}]}' },
        { ...page(1), body: '{"pageNumber":1,"pageSize":50,"totalCount":1,"data":[{"a":2}]}' },
        {
          path: '/accounts/vouchers/get',
          query: { phone: '+30 1' },
          status: 404,
          body: '{"code":1005,"message":"Data Not Found"}',
          at: '2024-05-02T09:00:00.000Z',
        },
      ],
    });
    const api = new LoyaltyApi(source);
    const first = await api.accountsPage({ start: '2024-05-01', end: '2024-05-01' }, 1, 50);
    const second = await api.accountsPage({ start: '2024-05-01', end: '2024-05-01' }, 1, 50);
    expect([first.data, second.data]).toEqual([[{ a: 1 }], [{ a: 2 }]]);
    const customer = { customerId: 'C1', phone: '+30 1', email: null };
    await expect(api.vouchersOf(customer)).rejects.toBeInstanceOf(DataNotFoundError);
    expect(api.observedAt(customer)).toBe('2024-05-02T09:00:00.000Z');
    await expect(api.accountsPage({ start: '2024-05-02', end: '2024-05-02' }, 1, 50)).rejects.toBeInstanceOf(
      FatalSourceError,
    );
  });

  it('reads a span file as it is asked: requests in another order, the same request twice, past its kept answers, and never asked', async () => {
    const archive = new AnswerArchive(join(testTempDir('archive-'), 'a'));
    const span = archive.openSpan({ job: 'nightly', stream: 'accounts', runId: 'r1', windows: WINDOW, pageSize: 50 });
    for (const i of [1, 2, 3])
      span.keep({ ...page(i), body: `{"pageNumber":${i},"pageSize":50,"totalCount":150,"data":[{"n":${i}}]}` });
    span.keep({ ...page(2), body: '{"pageNumber":2,"pageSize":50,"totalCount":150,"data":[{"n":"2 again"}]}' });
    await span.seal();
    await span.committed();
    const source = new ArchivedSource(span.file);
    const api = new LoyaltyApi(source);
    const ask = async (i: number) => (await api.accountsPage(WINDOW[0]!, i, 50)).data;
    // asked at once, out of order: each gets its own answer
    expect(await Promise.all([ask(3), ask(1), ask(2)])).toEqual([[{ n: 3 }], [{ n: 1 }], [{ n: 2 }]]);
    expect(await ask(2)).toEqual([{ n: '2 again' }]);
    expect(await ask(2)).toEqual([{ n: '2 again' }]); // past its kept answers: the last one again
    await expect(ask(4)).rejects.toBeInstanceOf(FatalSourceError);
    await source.close();
    // a load that stops early closes the file
    const early = new ArchivedSource(span.file);
    expect((await new LoyaltyApi(early).accountsPage(WINDOW[0]!, 1, 50)).data).toEqual([{ n: 1 }]);
    await early.close();
  });
});
