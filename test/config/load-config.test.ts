import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.js';
import { loadConfig, parseConfig, resolveJobPlan } from '../../src/config/load-config.js';

const minimal = `
source:
  base_url: http://127.0.0.1:8787
jobs:
  nightly:
    first_day: 2024-01-01
`;

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('jobs.yaml', () => {
  it('fills defaults', () => {
    const config = parseConfig(minimal, 'jobs.yaml', {});
    expect(config.destination).toEqual({ type: 'duckdb', path: './warehouse.duckdb', schema: 'main' });
    expect(config.jobs.nightly).toMatchObject({
      window_days: 1,
      lookback_days: 2,
      sweep_days: 7,
      streams: ['accounts', 'surveys', 'loyalty_postings', 'loyalty_status', 'vouchers'],
    });
    expect(config.source.page_size).toBe(500);
    // the customer directory is swept from a day early enough for any program
    expect(config.source.history_start).toBe('2000-01-01');
  });

  it('refuses postings without the accounts that list their customers, and a history_start that is no day', () => {
    const postingsOnly = minimal.replace(
      'first_day: 2024-01-01',
      'first_day: 2024-01-01\n    streams: [loyalty_postings]',
    );
    expect(errorOf(() => parseConfig(postingsOnly, 'my.yaml', {})).message).toBe(
      'my.yaml: jobs.nightly.streams: loyalty_postings, loyalty_status and vouchers ask the customers of the accounts stream: list accounts too',
    );
    expect(
      parseConfig(
        minimal.replace('first_day: 2024-01-01', 'first_day: 2024-01-01\n    streams: [surveys]'),
        'my.yaml',
        {},
      ).jobs.nightly!.streams,
    ).toEqual(['surveys']);
    const start = minimal.replace('jobs:', '  history_start: 2019-13-01\njobs:');
    expect(errorOf(() => parseConfig(start, 'my.yaml', {})).message).toBe(
      'my.yaml: source.history_start: is not a real calendar day',
    );
    expect(parseConfig(start.replace('2019-13-01', '2019-03-01'), 'my.yaml', {}).source.history_start).toBe(
      '2019-03-01',
    );
  });

  it('resolves one job into the plan its runs take, with the environment applied once', () => {
    const text = minimal.replace(
      'base_url: http://127.0.0.1:8787',
      'base_url: http://127.0.0.1:8787\n  timezone: Europe/Athens\n  page_size: 50',
    );
    const plan = resolveJobPlan(
      parseConfig(text, 'jobs.yaml', { LOYALTY_LEASE_SECONDS: '15', LOYALTY_TIMEZONE: 'UTC' }),
      'nightly',
    );
    expect(plan).toMatchObject({
      name: 'nightly',
      historyStart: '2000-01-01',
      timezone: 'UTC',
      pageSize: 50,
      sourceConcurrency: 4,
      leaseSeconds: 15,
    });
    expect(plan.job.first_day).toBe('2024-01-01');
    expect(errorOf(() => resolveJobPlan(parseConfig(minimal, 'my.yaml', {}), 'weekly')).message).toBe(
      "my.yaml: jobs: no job named 'weekly' (jobs: nightly)",
    );
  });

  it('takes how multiple-choice values travel (auto by default), and names a form it does not know', () => {
    expect(resolveJobPlan(parseConfig(minimal, 'jobs.yaml', {}), 'nightly').multipleChoice).toBe('auto');
    const stated = minimal.replace(
      'base_url: http://127.0.0.1:8787',
      'base_url: http://127.0.0.1:8787\n  multiple_choice: pipe',
    );
    expect(resolveJobPlan(parseConfig(stated, 'jobs.yaml', {}), 'nightly').multipleChoice).toBe('pipe');
    expect(errorOf(() => parseConfig(stated.replace('pipe', 'tab'), 'my.yaml', {})).message).toMatch(
      /^my\.yaml: source\.multiple_choice: /,
    );
  });

  it('turns the history of a stream off, and refuses a stream that keeps none', () => {
    const off = minimal.replace('first_day: 2024-01-01', 'first_day: 2024-01-01\n    history:\n      accounts: false');
    expect(parseConfig(off, 'my.yaml', {}).jobs.nightly!.history).toEqual({ accounts: false });
    const state = off.replace('accounts: false', 'loyalty_status: false\n      vouchers: false');
    expect(parseConfig(state, 'my.yaml', {}).jobs.nightly!.history).toEqual({ loyalty_status: false, vouchers: false });
    expect(errorOf(() => parseConfig(off.replace('accounts: false', 'surveys: false'), 'my.yaml', {})).message).toMatch(
      /^my\.yaml: jobs\.nightly\.history: unknown key 'surveys'/,
    );
    expect(errorOf(() => parseConfig(off.replace('accounts: false', 'accounts: nope'), 'my.yaml', {})).message).toMatch(
      /^my\.yaml: jobs\.nightly\.history\.accounts: /,
    );
  });

  it('takes a postings sweep for the cheap selections and a first night left to the sweeps, and refuses them where they cannot apply', () => {
    const job = (lines: string) => minimal.replace('first_day: 2024-01-01', `first_day: 2024-01-01\n${lines}`);
    const swept = parseConfig(
      job('    first_night: sweep\n    postings:\n      customers: webhook\n      sweep_days: 14'),
      'my.yaml',
      {},
    ).jobs.nightly!;
    expect(swept.postings.sweep_days).toBe(14);
    expect(swept.first_night).toBe('sweep');
    expect(
      errorOf(() => parseConfig(job('    postings:\n      customers: all\n      sweep_days: 14'), 'my.yaml', {}))
        .message,
    ).toBe(
      'my.yaml: jobs.nightly.postings.sweep_days: sweep_days is for the selections changed and webhook: customers all asks every customer every night',
    );
    expect(
      errorOf(() => parseConfig(job('    first_night: sweep\n    postings:\n      customers: changed'), 'my.yaml', {}))
        .message,
    ).toMatch(
      /^my\.yaml: jobs\.nightly\.first_night: first_night: sweep leaves customers to the postings sweep: set postings\.sweep_days/,
    );
    // a job without postings leaves only its state streams to their sweep
    expect(
      parseConfig(job('    first_night: sweep\n    streams: [accounts, loyalty_status]'), 'my.yaml', {}).jobs.nightly!
        .first_night,
    ).toBe('sweep');
    expect(errorOf(() => parseConfig(job('    first_night: later'), 'my.yaml', {})).message).toMatch(
      /^my\.yaml: jobs\.nightly\.first_night: /,
    );
  });

  it('the shipped jobs.yaml is valid', () => {
    const config = loadConfig('jobs.yaml', {});
    expect(Object.keys(config.jobs)).toContain('nightly');
  });

  it('names the file, the key and the problem', () => {
    const bad = minimal.replace('first_day: 2024-01-01', 'first_day: 2024-02-31');
    expect(errorOf(() => parseConfig(bad, 'my.yaml', {})).message).toBe(
      'my.yaml: jobs.nightly.first_day: is not a real calendar day',
    );
    const unknown = `${minimal}    window_dayz: 3\n`;
    expect(errorOf(() => parseConfig(unknown, 'my.yaml', {})).message).toMatch(
      /^my\.yaml: jobs\.nightly: unknown key 'window_dayz'/,
    );
    const zone = minimal.replace('jobs:', '  timezone: Mars/Base\njobs:');
    expect(errorOf(() => parseConfig(zone, 'my.yaml', {})).message).toMatch(
      /^my\.yaml: source\.timezone: must be an IANA time zone/,
    );
    expect(errorOf(() => parseConfig('source: [', 'my.yaml', {})).message).toMatch(
      /^my\.yaml: line \d+: is not valid YAML/,
    );
    expect(errorOf(() => loadConfig('does-not-exist.yaml', {})).message).toBe('does-not-exist.yaml: file not found');
    const memory = `${minimal}destination:\n  type: duckdb\n  memory_limit: lots\n`;
    expect(errorOf(() => parseConfig(memory, 'my.yaml', {})).message).toBe(
      'my.yaml: destination.memory_limit: must be a size such as 128MB or 1GiB',
    );
    expect(parseConfig(memory.replace('lots', '256MB'), 'my.yaml', {}).destination).toMatchObject({
      type: 'duckdb',
      memory_limit: '256MB',
    });
    const checkpoint = `${minimal}destination:\n  type: duckdb\n  checkpoint_threshold: 1 gigabyte\n`;
    expect(errorOf(() => parseConfig(checkpoint, 'my.yaml', {})).message).toBe(
      'my.yaml: destination.checkpoint_threshold: must be a size such as 128MB or 1GiB',
    );
    expect(parseConfig(checkpoint.replace('1 gigabyte', '1GB'), 'my.yaml', {}).destination).toMatchObject({
      type: 'duckdb',
      checkpoint_threshold: '1GB',
    });
    const staging = `${minimal}destination:\n  type: duckdb\n  staging_memory: -1MB\n`;
    expect(errorOf(() => parseConfig(staging, 'my.yaml', {})).message).toBe(
      'my.yaml: destination.staging_memory: must be a size such as 128MB or 1GiB',
    );
    expect(parseConfig(staging.replace('-1MB', '0KB'), 'my.yaml', {}).destination).toMatchObject({
      type: 'duckdb',
      staging_memory: '0KB',
    });
    const threads = `${minimal}destination:\n  type: duckdb\n  threads: 0\n`;
    expect(errorOf(() => parseConfig(threads, 'my.yaml', {})).message).toMatch(
      /^my\.yaml: destination\.threads: .*>=1/,
    );
    expect(errorOf(() => parseConfig(threads.replace('threads: 0', 'threads: two'), 'my.yaml', {})).message).toMatch(
      /^my\.yaml: destination\.threads: .*number/,
    );
    expect(parseConfig(threads.replace('threads: 0', 'threads: 2'), 'my.yaml', {}).destination).toMatchObject({
      type: 'duckdb',
      threads: 2,
    });
  });

  it('checks the retry settings', () => {
    expect(parseConfig(minimal, 'jobs.yaml', {}).source).toMatchObject({
      retries: 5,
      timeout_ms: 30_000,
      backoff_base_ms: 250,
      backoff_max_ms: 30_000,
    });
    const quick = minimal.replace('jobs:', '  backoff_base_ms: 5\n  backoff_max_ms: 50\njobs:');
    expect(parseConfig(quick, 'jobs.yaml', {}).source).toMatchObject({ backoff_base_ms: 5, backoff_max_ms: 50 });
    const upsideDown = minimal.replace('jobs:', '  backoff_base_ms: 500\n  backoff_max_ms: 50\njobs:');
    expect(errorOf(() => parseConfig(upsideDown, 'my.yaml', {})).message).toBe(
      'my.yaml: source.backoff_max_ms: must not be less than backoff_base_ms',
    );
    const zero = minimal.replace('jobs:', '  backoff_base_ms: 0\njobs:');
    expect(errorOf(() => parseConfig(zero, 'my.yaml', {})).message).toMatch(/^my\.yaml: source\.backoff_base_ms: /);
  });

  it('names the file of a YAML alias bomb instead of expanding it', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const name = String.fromCharCode(97 + i);
      levels.push(
        `${name}: &${name} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`,
      );
    }
    const bomb = `${minimal}${levels.join('\n')}\n`;
    expect(errorOf(() => parseConfig(bomb, 'jobs.yaml', {})).message).toMatch(
      /^jobs\.yaml: is not valid YAML: .*alias/i,
    );
  });

  it('refuses a token or prefix with a line break, naming where it came from and never quoting it', () => {
    const withToken = minimal.replace('8787', '8787\n  auth:\n    token: "tok-secret-1\\r\\n"');
    const fromFile = errorOf(() => parseConfig(withToken, 'jobs.yaml', {}));
    expect(fromFile.message).toMatch(/^jobs\.yaml: source\.auth\.token: holds a line break/);
    const fromEnv = errorOf(() => parseConfig(minimal, 'jobs.yaml', { LOYALTY_API_TOKEN: 'tok-secret-2\n' }));
    expect(fromEnv.message).toMatch(/^LOYALTY_API_TOKEN: holds a line break/);
    for (const error of [fromFile, fromEnv]) expect(error.message).not.toMatch(/tok-secret/);
  });

  it('refuses a user or password in the service URL, without quoting it', () => {
    const inFile = minimal.replace('http://127.0.0.1', 'https://etl:url-secret-9@127.0.0.1');
    const fromFile = errorOf(() => parseConfig(inFile, 'jobs.yaml', {}));
    expect(fromFile.message).toMatch(/^jobs\.yaml: source\.base_url: must not hold a user or password/);
    const fromEnv = errorOf(() =>
      parseConfig(minimal, 'jobs.yaml', { LOYALTY_API_URL: 'https://etl:url-secret-9@example.test/api' }),
    );
    expect(fromEnv.message).toMatch(/^LOYALTY_API_URL: must not hold a user or password/);
    for (const error of [fromFile, fromEnv]) expect(error.message).not.toContain('url-secret-9');
  });

  it("keeps a PostgreSQL password given as the URL's password parameter secret too", () => {
    const config = parseConfig(minimal, 'jobs.yaml', {
      LOYALTY_WAREHOUSE: 'postgres://etl@db:5432/wh?password=param-secret-7',
    });
    expect(config.secrets).toContain('param-secret-7');
  });

  it('substitutes ${VAR} and fails clearly on a missing one', () => {
    const text = minimal.replace('http://127.0.0.1:8787', '${API}');
    expect(parseConfig(text, 'j.yaml', { API: 'http://example.test' }).source.base_url).toBe('http://example.test');
    expect(errorOf(() => parseConfig(text, 'j.yaml', {})).message).toBe(
      'j.yaml: source.base_url: environment variable API is not set (write ${API:-default} for a default)',
    );
  });

  it('lets LOYALTY_* variables override the file and collects secrets', () => {
    const config = parseConfig(minimal, 'jobs.yaml', {
      LOYALTY_API_URL: 'http://other:1/',
      LOYALTY_API_TOKEN: 's3cret-token',
      LOYALTY_TIMEZONE: 'Asia/Tokyo',
      LOYALTY_WAREHOUSE: 'postgres://etl:pw-secret@db:5432/wh',
    });
    expect(config.source.base_url).toBe('http://other:1');
    expect(config.source.auth.token).toBe('s3cret-token');
    expect(config.source.timezone).toBe('Asia/Tokyo');
    expect(config.destination).toEqual({
      type: 'postgres',
      url: 'postgres://etl:pw-secret@db:5432/wh',
      schema: 'public',
    });
    expect(config.secrets).toEqual(['s3cret-token', 'pw-secret']);
    expect(parseConfig(minimal, 'jobs.yaml', { LOYALTY_WAREHOUSE: '/tmp/x.duckdb' }).destination).toMatchObject({
      type: 'duckdb',
      path: '/tmp/x.duckdb',
    });
    expect(errorOf(() => parseConfig(minimal, 'jobs.yaml', { LOYALTY_TIMEZONE: 'Nowhere' })).message).toMatch(
      /^LOYALTY_TIMEZONE: /,
    );
  });
});

describe('destination.analysts', () => {
  const withAnalysts = (destination: string) => `${minimal}destination:\n${destination}\n`;

  it('hashes by default with a key derived from LOYALTY_PII_SALT, the same for the same salt; keep and drop need none', () => {
    const a = parseConfig(minimal, 'jobs.yaml', { LOYALTY_PII_SALT: 'pepper' });
    const b = parseConfig(minimal, 'jobs.yaml', { LOYALTY_PII_SALT: 'pepper' });
    expect(a.analysts.personalData).toBe('hash');
    expect(a.analysts.key).toMatch(/^[0-9a-f]{64}$/);
    expect(b.analysts.key).toBe(a.analysts.key);
    expect(parseConfig(minimal, 'jobs.yaml', { LOYALTY_PII_SALT: 'salt' }).analysts.key).not.toBe(a.analysts.key);
    expect(a.secrets).toEqual(expect.arrayContaining(['pepper', a.analysts.key]));
    const dropped = parseConfig(withAnalysts('  type: duckdb\n  analysts:\n    personal_data: drop'), 'jobs.yaml', {});
    expect(dropped.analysts).toEqual({ personalData: 'drop', schema: undefined, pipelineTables: false });
  });

  it('without a salt under hash, the config holds no key: the warehouse keeps one of its own', () => {
    const plain = parseConfig(minimal, 'jobs.yaml', {});
    expect(plain.analysts).toEqual({ personalData: 'hash', schema: undefined, pipelineTables: false });
    const postgres = parseConfig(withAnalysts('  type: postgres\n  url: postgres://etl@db/wh'), 'jobs.yaml', {});
    expect(postgres.analysts).toEqual({ personalData: 'hash', schema: 'public_analysts', pipelineTables: false });
  });

  it('refuses an unknown policy, a schema for DuckDB, and the warehouse schema itself', () => {
    expect(
      errorOf(() => parseConfig(withAnalysts('  type: duckdb\n  analysts:\n    personal_data: mask'), 'my.yaml', {}))
        .message,
    ).toMatch(/^my\.yaml: destination\.analysts\.personal_data: /);
    expect(
      errorOf(() => parseConfig(withAnalysts('  type: duckdb\n  analysts:\n    schema: x'), 'my.yaml', {})).message,
    ).toBe('my.yaml: destination.analysts.schema: is for PostgreSQL: DuckDB analysts read the published copy');
    expect(
      errorOf(() =>
        parseConfig(
          withAnalysts('  type: postgres\n  url: postgres://etl@db/wh\n  schema: s\n  analysts:\n    schema: s'),
          'my.yaml',
          {},
        ),
      ).message,
    ).toBe("my.yaml: destination.analysts.schema: must differ from the warehouse's schema s");
  });
});
