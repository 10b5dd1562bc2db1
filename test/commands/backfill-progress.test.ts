import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress } from '../../src/commands/backfill-progress.js';
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

describe('backfill progress', () => {
  it('draws a bar with windows, records, rate and ETA on a terminal, and writes no log line', () => {
    let now = 0;
    const log = jsonLines();
    const tty = terminal();
    const progress = createProgress({ total: 200, done: 50, stream: tty, logger: createLogger({ level: 'info', destination: log.stream }), now: () => now });
    now = 10_000;
    progress.update(100, 12_345);
    progress.stop();
    const shown = tty.text();
    expect(shown).toMatch(/backfill \[[█░]+\] 100\/200 windows \| 12345 records \| 5\.0 windows\/s \| ETA \S+/);
    expect(log.lines()).toEqual([]);
  });

  it('logs JSON progress lines, at most every few seconds, when stderr is not a terminal', () => {
    let now = 0;
    const log = jsonLines();
    const plain = new PassThrough();
    let written = '';
    plain.on('data', (d) => (written += d));
    const progress = createProgress({
      total: 730,
      done: 30,
      stream: plain,
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
});
