import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createProgress, formatEta } from '../../src/commands/progress-display.js';
import { createLogger } from '../../src/log/logger.js';

function terminal(): PassThrough & { isTTY: boolean; columns: number; text: () => string } {
  const stream = new PassThrough() as PassThrough & { isTTY: boolean; columns: number; text: () => string };
  let text = '';
  stream.on('data', (d) => (text += d));
  stream.isTTY = true;
  stream.columns = 160;
  stream.text = () => text;
  return stream;
}

function jsonLines(): { stream: PassThrough; lines: () => Array<Record<string, unknown>> } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d) => (text += d));
  return {
    stream,
    lines: () =>
      text
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

describe('the progress display', () => {
  afterEach(() => vi.useRealTimers());

  it('draws a bar with windows, records, rate and ETA on a terminal, and writes no log line', () => {
    let now = 0;
    const log = jsonLines();
    const tty = terminal();
    const progress = createProgress({
      label: 'backfill',
      total: 200,
      done: 50,
      stream: tty,
      bar: true,
      logger: createLogger({ level: 'info', destination: log.stream }),
      now: () => now,
    });
    now = 10_000;
    progress.update(100, 12_345);
    progress.stop();
    const shown = tty.text();
    expect(shown).toMatch(/backfill \[[█░]+\] 100\/200 windows \| 12,345 records \| 5\.0 windows\/s \| ETA 20s/);
    expect(log.lines()).toEqual([]);
  });

  it('logs JSON progress lines, at most every few seconds, when stderr is not a terminal', () => {
    let now = 0;
    const log = jsonLines();
    const plain = new PassThrough();
    let written = '';
    plain.on('data', (d) => (written += d));
    const progress = createProgress({
      label: 'backfill',
      total: 730,
      done: 30,
      stream: plain,
      bar: false,
      logger: createLogger({ level: 'info', destination: log.stream }),
      now: () => now,
      logEveryMs: 5000,
    });
    now = 1000;
    progress.update(40, 100); // too soon for a line
    now = 10_000;
    progress.update(130, 900);
    now = 12_000;
    progress.stop();
    expect(written).toBe('');
    const lines = log.lines();
    expect(lines.map((l) => l.msg)).toEqual(['backfill progress', 'backfill progress']);
    expect(lines[0]).toMatchObject({
      level: 'info',
      windowsDone: 130,
      windowsTotal: 730,
      records: 900,
      windowsPerSecond: 10,
      etaSeconds: 60,
    });
    expect(lines[1]).toMatchObject({ windowsDone: 130, records: 900 });
  });

  it('says the time left is being estimated until a window is done, and counts it from the rate after', () => {
    let now = 0;
    const tty = terminal();
    const progress = createProgress({
      label: 'run',
      total: 120,
      done: 0,
      stream: tty,
      bar: true,
      logger: createLogger({ level: 'silent' }),
      now: () => now,
    });
    now = 4000;
    progress.update(0, 0);
    expect(tty.text()).toMatch(/run \[[░]+\] 0\/120 windows \| 0 records \| 0\.0 windows\/s \| ETA estimating/);
    expect(tty.text()).not.toMatch(/ETA \d/);
    now = 10_000;
    progress.update(20, 500);
    progress.stop();
    expect(tty.text()).toMatch(/run \[[█░]+\] 20\/120 windows \| 500 records \| 2\.0 windows\/s \| ETA 50s/);
  });

  it('shows where a per-customer stream is while its spans run, with their time left, and drops it after', () => {
    // the bar redraws a few times a second on a timer
    vi.useFakeTimers();
    const drawn = () => {
      vi.advanceTimersByTime(500);
      return tty.text().split('\u001b[1G').at(-1)!;
    };
    let now = 0;
    const tty = terminal();
    const progress = createProgress({
      label: 'run',
      total: 3460,
      done: 0,
      stream: tty,
      bar: true,
      logger: createLogger({ level: 'silent' }),
      now: () => now,
    });
    now = 10_000;
    progress.update(2768, 7671);
    progress.customers('loyalty_status', { asked: 0, selected: 386 });
    expect(drawn()).toMatch(
      /run \[[█░]+\] 2768\/3460 windows \| loyalty_status: 0\/386 customers, estimating \| 7,671 records \| [\d.]+ windows\/s \| ETA estimating/,
    );
    now = 22_000;
    progress.customers('loyalty_status', { asked: 120, selected: 386 });
    // 120 customers in 12 s: the 266 left take 27 s; windows per second cannot tell the run's time left meanwhile
    expect(drawn()).toMatch(
      /2768\/3460 windows \| loyalty_status: 120\/386 customers, 27s left \| 7,671 records \| [\d.]+ windows\/s \| ETA estimating/,
    );
    now = 50_000;
    progress.customers('loyalty_status', undefined);
    progress.update(3460, 8000);
    const last = drawn();
    progress.stop();
    expect(last).toMatch(/run \[[█]+\] 3460\/3460 windows \| 8,000 records \| [\d.]+ windows\/s \| ETA 0s/);
    expect(last).not.toMatch(/customers/);
  });

  it('sums the lanes of a stream as the pipeline reports them, and shows each stream under way', () => {
    let now = 0;
    const tty = terminal();
    const progress = createProgress({
      label: 'backfill',
      total: 100,
      done: 0,
      stream: tty,
      bar: true,
      logger: createLogger({ level: 'silent' }),
      now: () => now,
    });
    progress.customers('loyalty_postings', { asked: 1500, selected: 2000 });
    now = 1000;
    progress.customers('vouchers', { asked: 3, selected: 12_000 });
    progress.stop();
    expect(tty.text()).toMatch(
      /0\/100 windows \| loyalty_postings: 1,500\/2,000 customers, estimating \| vouchers: 3\/12,000 customers, estimating \| 0 records/,
    );
  });

  it('gives the customers asked of a per-customer stream in the JSON progress lines while its spans run', () => {
    let now = 0;
    const log = jsonLines();
    const progress = createProgress({
      label: 'backfill',
      total: 730,
      done: 0,
      stream: new PassThrough(),
      bar: false,
      logger: createLogger({ level: 'info', destination: log.stream }),
      now: () => now,
      logEveryMs: 5000,
    });
    now = 2000;
    progress.update(365, 1000);
    progress.customers('loyalty_postings', { asked: 0, selected: 400 });
    now = 6000;
    progress.customers('loyalty_postings', { asked: 100, selected: 400 });
    now = 8000;
    progress.customers('loyalty_postings', undefined);
    progress.update(730, 5000);
    progress.stop();
    const lines = log.lines();
    expect(lines.map((l) => l.msg)).toEqual(['backfill progress', 'backfill progress']);
    // 100 customers in 4 s: the 300 left take 12 s
    expect(lines[0]).toMatchObject({
      windowsDone: 365,
      customers: [{ stream: 'loyalty_postings', asked: 100, selected: 400, etaSeconds: 12 }],
      records: 1000,
      etaSeconds: null,
    });
    expect(lines[1]).toMatchObject({ windowsDone: 730, records: 5000 });
    expect(lines[1]).not.toHaveProperty('customers');
  });

  it('writes the time left in seconds, minutes or hours', () => {
    expect([null, 42, 185, 7800].map(formatEta)).toEqual(['estimating', '42s', '3m 05s', '2h 10m']);
  });
});
