import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
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
    expect(lines[0]).toMatchObject({ level: 'info', windowsDone: 130, windowsTotal: 730, records: 900, windowsPerSecond: 10, etaSeconds: 60 });
    expect(lines[1]).toMatchObject({ windowsDone: 130, records: 900 });
  });

  it('says the time left is being estimated until a window is done, and counts it from the rate after', () => {
    let now = 0;
    const tty = terminal();
    const progress = createProgress({ label: 'run', total: 120, done: 0, stream: tty, bar: true, logger: createLogger({ level: 'silent' }), now: () => now });
    now = 4000;
    progress.update(0, 0);
    expect(tty.text()).toMatch(/run \[[░]+\] 0\/120 windows \| 0 records \| 0\.0 windows\/s \| ETA estimating/);
    expect(tty.text()).not.toMatch(/ETA \d/);
    now = 10_000;
    progress.update(20, 500);
    progress.stop();
    expect(tty.text()).toMatch(/run \[[█░]+\] 20\/120 windows \| 500 records \| 2\.0 windows\/s \| ETA 50s/);
  });

  it('writes the time left in seconds, minutes or hours', () => {
    expect([null, 42, 185, 7800].map(formatEta)).toEqual(['estimating', '42s', '3m 05s', '2h 10m']);
  });
});
