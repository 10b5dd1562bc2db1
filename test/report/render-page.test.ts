import { describe, expect, it } from 'vitest';
import { escapeHtml, html, jsonInScript } from '../../src/report/html.js';
import { renderReportPage } from '../../src/report/render-page.js';
import type { ReportModel, ReportWindow, StreamReport } from '../../src/report/report-model.js';
import { countGaps, windowGrid } from '../../src/report/window-grid.js';
import { encodeWindowData } from '../../src/report/window-data.js';

const EVIL = '</script><script>window.__pwned=1</script><img src=x onerror="alert(1)">';

function stream(name: string, windows: ReportWindow[], extra: Partial<StreamReport> = {}): StreamReport {
  return {
    stream: name,
    completeThrough: '2024-05-02',
    lagDays: 0,
    windowsDone: windows.filter((w) => w.status === 'done').length,
    windowsFailed: windows.filter((w) => w.status === 'failed').length,
    windowsPending: 0,
    rowsLoaded: 100,
    rejects: 1,
    fieldRejects: 0,
    requests: 4,
    retries: 0,
    windows,
    gaps: countGaps(windows),
    ...extra,
  };
}

function model(streams: StreamReport[], extra: Partial<ReportModel> = {}): ReportModel {
  return {
    job: 'nightly',
    lastClosedDay: '2024-05-02',
    generatedAt: '2024-05-03T06:00:00.000Z',
    warehouse: 'duckdb /tmp/w.duckdb (schema main)',
    warehouseRelease: {
      release: '0.5.0',
      openedBy: '0.5.0',
      openedSince: '2024-05-03 05:00:00+00',
      migration: { version: '015_releases_and_pii_key', release: '0.5.0', appliedAt: '2024-05-01 02:00:00+00' },
      releases: [],
    },
    timezone: 'Europe/Athens',
    windowDays: 1,
    firstDay: '2024-05-01',
    rejectThreshold: 0.05,
    streams,
    runLock: null,
    backfills: [],
    runs: [],
    webhookEvents: null,
    rejectDays: [],
    rejectReasons: [],
    tables: [],
    ...extra,
  };
}

function window(start: string, status: ReportWindow['status'], extra: Partial<ReportWindow> = {}): ReportWindow {
  return {
    start,
    end: start,
    status,
    extracted: 10,
    loaded: 9,
    rejected: 1,
    requests: 2,
    finishedAt: '2024-05-03 02:00:00+00',
    runId: 'run-1',
    error: null,
    ...extra,
  };
}

describe('html', () => {
  it('escapes every interpolated text, and inserts only markup it made', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(html`<td title="${EVIL}">${EVIL}</td>`.text).not.toMatch(/<script|<img|"alert/);
    expect(html`<ul>${['<li>', html`<li>ok</li>`]}</ul>`.text).toBe('<ul>&lt;li&gt;<li>ok</li></ul>');
  });

  it('writes JSON that no text can close a script element with', () => {
    const text = jsonInScript({ e: EVIL, line: 'a\u2028b' }).text;
    expect(text).not.toMatch(/[<>&\u2028]/);
    expect(JSON.parse(text)).toEqual({ e: EVIL, line: 'a\u2028b' });
  });
});

describe('renderReportPage', () => {
  it('shows warehouse text only as text: errors, commands, reject reasons and payloads, table and backfill names', () => {
    const page = renderReportPage(
      model([stream('accounts', [window('2024-05-01', 'done'), window('2024-05-02', 'failed', { error: EVIL })])], {
        runs: [
          {
            runId: EVIL,
            command: EVIL,
            status: 'failed',
            host: EVIL,
            pid: 1,
            backfillId: null,
            startedAt: '2024-05-03 02:00:00+00',
            finishedAt: '2024-05-03 02:01:00+00',
            durationSeconds: 60,
            requests: 4,
            retries: 0,
            windows: 1,
            rowsLoaded: 9,
            rowsRejected: 1,
            error: EVIL,
          },
        ],
        runLock: { runId: EVIL, host: EVIL, pid: 7, since: '2024-05-03 02:00:00+00' },
        rejectDays: [{ day: '2024-05-01', stream: 'accounts', count: 1 }],
        rejectReasons: [
          {
            stream: 'accounts',
            reason: EVIL,
            count: 1,
            example: { error: EVIL, payload: JSON.stringify({ first: EVIL }), windowStart: '2024-05-01' },
          },
        ],
        backfills: [
          {
            backfillId: EVIL,
            streams: ['accounts'],
            from: '2024-05-01',
            to: '2024-05-02',
            status: 'open',
            startedAt: '2024-05-03 01:00:00+00',
            finishedAt: null,
            windowsTotal: 2,
            windowsDone: 1,
            windowsFailed: 1,
            liveWorkers: 0,
          },
        ],
        tables: [{ table: EVIL, rows: 3 }],
        webhookEvents: { stored: 1, lastReceivedAt: '2024-05-03 01:00:00+00', bookmark: 0, backlog: 1 },
      }),
    );
    expect(page.match(/<script/gi)).toHaveLength(2); // the data block and the page's own script
    expect(page).not.toMatch(/<img|onerror="alert/);
    expect(page).toContain('&lt;/script&gt;&lt;script&gt;window.__pwned=1&lt;/script&gt;');
    const data = page.split('<script type="application/json" id="report-data">')[1]!.split('</script>')[0]!;
    expect(JSON.parse(data).errors).toEqual([EVIL]);
  });

  it('draws one cell per window in window order, and says what needs attention first', () => {
    const windows = windowGrid(
      [window('2024-05-01', 'done', { rejected: 0 }), window('2024-05-03', 'failed', { error: 'HTTP 503' })],
      '2024-05-01',
      '2024-05-04',
      1,
    );
    const page = renderReportPage(
      model([stream('accounts', windows, { completeThrough: '2024-05-01', lagDays: 3 })], {
        lastClosedDay: '2024-05-04',
      }),
    );
    const cells = page.split('<g class="cells">')[1]!.split('</g>')[0]!;
    expect([...cells.matchAll(/class="(\w+)"/g)].map((m) => m[1])).toEqual(['d', 'm', 'f', 'm']);
    expect(page).toContain(
      '<div class="banner bad"><strong>Needs attention</strong><ul><li><b>accounts</b>: 1 failed window; 1 gap (windows never loaded, later ones were)',
    );
    expect(page).toContain('complete through 2024-05-01, 3 days behind');
    expect(page.indexOf('class="banner')).toBeLessThan(page.indexOf('<svg class="cal"'));
  });

  it('stays small for years of daily windows: four years of three streams in under 1 MB', () => {
    const streams = ['accounts', 'surveys', 'loyalty_postings'].map((name) =>
      stream(
        name,
        windowGrid([], '2021-01-01', '2024-12-31', 1).map((w, i) => ({
          ...w,
          status: i % 97 === 0 ? ('failed' as const) : ('done' as const),
          extracted: 1200 + i,
          loaded: 1190 + i,
          rejected: i % 13,
          requests: 3,
          finishedAt: '2025-01-01 02:00:00+00',
          runId: `run-${Math.floor(i / 30)}`,
          error: i % 97 === 0 ? 'accounts page 1: HTTP 503 (gave up after 6 attempts)' : null,
        })),
      ),
    );
    const windows = streams.reduce((n, s) => n + s.windows.length, 0);
    expect(windows).toBe(3 * 1461);
    const page = renderReportPage(model(streams, { lastClosedDay: '2024-12-31', firstDay: '2021-01-01' }));
    expect(page.match(/<rect x=/g)!.length).toBe(windows);
    expect(Buffer.byteLength(page)).toBeLessThan(1_000_000);
    const data = encodeWindowData({ streams });
    expect(data.errors).toHaveLength(1); // a repeated error is stored once
    expect(data.streams[0]!.s).toHaveLength(1461);
  });
});
