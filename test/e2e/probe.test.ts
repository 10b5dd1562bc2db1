import { afterEach, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type EmulatorReadings, type Middleware } from '../../src/emulator/index.js';
import type { Finding } from '../../src/commands/probe-finding.js';
import { emulatorJobs, runCli, writeJobsFile } from '../helpers/cli.js';

const TZ = 'Europe/Athens';
const START = '2024-03-01';
const END = '2024-05-31';

/** Every request the emulator served, with its method. */
class Requests {
  readonly seen: Array<{ method: string; path: string }> = [];
  readonly middleware: Middleware = (request, next) => {
    this.seen.push({ method: request.method, path: request.path });
    return next(request);
  };
}

describe('probe: first contact with a service', () => {
  let emulator: Emulator | undefined;
  afterEach(async () => {
    await emulator?.close();
    emulator = undefined;
  });

  /** `probe --json` against an emulator serving `readings`, with `page_size` in the config; one emulator per call. */
  async function probe(
    readings: EmulatorReadings,
    pageSize = 50,
    human = false,
    sourceKeys: Record<string, string | number> = {},
  ) {
    const requests = new Requests();
    emulator = await startEmulator({
      seed: 3,
      accounts: 60,
      startDate: START,
      endDate: END,
      timezone: TZ,
      port: 0,
      readings,
      hooks: { middleware: [requests.middleware] },
    });
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      pageSize,
      sourceKeys: { requests_per_second: 200, ...sourceKeys },
    });
    const cli = await runCli(['probe', '--config', file, '--until', END, '--json']);
    const out = cli.stdout
      ? (JSON.parse(cli.stdout) as { requests: number; agree: boolean; findings: Finding[] })
      : undefined;
    const finding = (name: string) => out?.findings.find((f) => f.name === name);
    const text = human ? await runCli(['probe', '--config', file, '--until', END]) : undefined;
    await emulator.close();
    emulator = undefined;
    return { cli, out, finding, requests: requests.seen, text };
  }

  it('finds the emulator as the config reads it: exit 0, read-only, within its request budget', async () => {
    const { cli, out, finding, requests } = await probe({});
    expect(cli.code, cli.stderr).toBe(0);
    expect(out!.agree).toBe(true);
    expect(requests.length).toBe(out!.requests);
    expect(requests.length).toBeLessThanOrEqual(100);
    expect(requests.every((r) => r.method === 'GET')).toBe(true);
    expect(finding('first page number')).toMatchObject({ verdict: 'agrees', config: '1' });
    expect(finding('export end day')).toMatchObject({ verdict: 'agrees', config: 'inclusive' });
    expect(finding('page size')).toMatchObject({ verdict: 'agrees' });
    expect(finding('error answer (1005)')!.service).toMatch(
      /HTTP 404 \(application\/json\), body \{"code":1005,"message":"Data Not Found"\}/,
    );
    expect(finding('error answer (400)')!.service).toMatch(/HTTP 400/);
    expect(finding('accounts listing')!.service).toMatch(/^each customer once, as of its last change/);
    expect(finding('listing order')!.service).toMatch(/^stable/);
    expect(finding('numbers and booleans')!.service).toMatch(/^JSON numbers and booleans/);
    expect(finding('multiple-choice values')).toMatchObject({ verdict: 'agrees', config: 'auto' });
    expect(finding('multiple-choice values')!.service).toMatch(
      /value\(s\) of "Interests"; each reads as one list as comma/,
    );
    expect(finding('fields of posting')!.service).toMatch(
      /every listed member present; no member the spec does not list/,
    );
    // a source that cannot be reached
    const text = await runCli([
      'probe',
      '--config',
      emulatorJobs({ url: 'http://127.0.0.1:9', timezone: TZ, firstDay: START }),
      '--until',
      END,
    ]);
    expect(text.code).toBe(1);
    expect(text.stderr).toMatch(/^loyalty-etl: source: .*connection failed/m);
  });

  it('names what to set when the config and the service disagree, and exits 7', async () => {
    const { cli, out, finding, requests, text } = await probe(
      { exportEnd: 'exclusive', firstPage: 0, pageSizeCap: 20 },
      50,
      true,
    );
    expect(cli.code).toBe(7);
    expect(cli.stderr).toMatch(
      /^loyalty-etl: probe: the config and the service disagree on first page number, export end day, page size/m,
    );
    expect(out!.agree).toBe(false);
    expect(requests.length).toBeLessThanOrEqual(100);
    expect(finding('first page number')).toMatchObject({ verdict: 'differs', config: '1', set: ['first_page: 0'] });
    expect(finding('export end day')).toMatchObject({
      verdict: 'differs',
      config: 'inclusive',
      set: ['export_end: exclusive'],
    });
    expect(finding('page size')).toMatchObject({ verdict: 'differs', config: '50', set: ['page_size: 20'] });
    // the human form: each finding beside the config, then the lines to paste
    expect(text!.code).toBe(7);
    expect(text!.stdout).toMatch(/^export end day\s+inclusive\s+differs\s+exclusive \(/m);
    expect(text!.stdout).toContain(
      'set in jobs.yaml:\nsource:\n  first_page: 0\n  export_end: exclusive\n  page_size: 20\n',
    );
    // with those lines set, they agree
    const set = await probe({ exportEnd: 'exclusive', firstPage: 0, pageSizeCap: 20 }, 20, false, {
      export_end: 'exclusive',
      first_page: 0,
    });
    expect(set.cli.code, set.cli.stdout + set.cli.stderr).toBe(0);
    expect(set.out!.findings.filter((f) => f.verdict !== 'seen').map((f) => [f.name, f.verdict])).toEqual([
      ['first page number', 'agrees'],
      ['export end day', 'agrees'],
      ['page size', 'agrees'],
      ['multiple-choice values', 'agrees'],
    ]);
  });

  it('reads multiple-choice values in every form: names the one form that reads them all, notes those no form reads', async () => {
    const wrong = await probe({ choiceLists: 'pipe' }, 50, false, { multiple_choice: 'comma' });
    expect(wrong.cli.code).toBe(7);
    expect(wrong.finding('multiple-choice values')).toMatchObject({
      verdict: 'differs',
      config: 'comma',
      set: ['multiple_choice: pipe'],
    });
    expect(wrong.finding('multiple-choice values')!.service).toMatch(
      /each reads as one list as pipe; \d+ refused as comma/,
    );
    const twoWays = await probe({ choiceLists: 'semicolon' });
    expect(twoWays.cli.code).toBe(7);
    const found = twoWays.finding('multiple-choice values')!;
    expect(found).toMatchObject({ verdict: 'differs', config: 'auto' });
    expect(found.set).toHaveLength(1);
    expect(found.set![0]).toMatch(
      /^# \d+ value\(s\) read as more than one list of options, or none, whatever the form/,
    );
  });

  it.each<[string, EmulatorReadings, string, RegExp]>([
    [
      'per-change listing',
      { accountsListing: 'per-change' },
      'accounts listing',
      /^per change: customer \S+ is listed twice/,
    ],
    [
      'current listing',
      { accountsListing: 'current' },
      'accounts listing',
      /^the current profile: \S+ is listed in 2024-05-02\.\.2024-05-08 with a profile set on/,
    ],
    [
      'errors in 200 answers, nested',
      { errorStatus: 200, errorBody: 'nested' },
      'error answer (1005)',
      /HTTP 200 .*\{"error":\{"code":1005/,
    ],
    [
      'errors as text',
      { errorBody: 'text' },
      'error answer (1005)',
      /HTTP 404 \(text\/plain\), body 1005 Data Not Found/,
    ],
    ['scalars as strings', { scalars: 'strings' }, 'numbers and booleans', /^sent as JSON strings/],
    ['zone abbreviations', { zoneLabels: 'abbreviations' }, 'timestamps and zone labels', /labels .*EEST/],
    ['zone offsets', { zoneLabels: 'offsets' }, 'timestamps and zone labels', /labels .*\+03:00/],
    ['unlisted fields', { unlistedFields: true }, 'fields of posting', /unlisted channel \(\d+ of \d+\), campaign/],
    ['unstable order', { listingOrder: 'unstable' }, 'listing order', /^changes between two requests of the same page/],
    [
      'sample field names',
      { fieldNames: 'sample' },
      'fields of account',
      /every listed member present; names customerId as accountId \(the pipeline reads either name\); no member/,
    ],
  ])('finds %s, which the pipeline reads as it comes: exit 0', async (_name, readings, name, service) => {
    const { cli, finding, requests } = await probe(readings);
    expect(finding(name)?.service).toMatch(service);
    expect(finding(name)?.verdict).toBe('seen');
    expect(cli.code, cli.stdout).toBe(0);
    expect(requests.length).toBeLessThanOrEqual(100);
  });

  it('a bad config is exit 2 before any request', async () => {
    const file = writeJobsFile(
      'source:\n  base_url: http://127.0.0.1:9\n  page_size: 0\njobs:\n  nightly:\n    streams: [accounts]\n    first_day: 2024-03-01\n',
    );
    const cli = await runCli(['probe', '--config', file]);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/page_size/);
  });
});
