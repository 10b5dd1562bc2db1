import { describe, expect, it } from 'vitest';
import { archiveOf } from '../../src/config/duckdb-files.js';
import { ConfigError } from '../../src/config/config-error.js';
import { parseConfig } from '../../src/config/load-config.js';

const withDestination = (destination: string) => `
source:
  base_url: http://127.0.0.1:8787
destination:
${destination}
jobs:
  nightly:
    first_day: 2024-01-01
`;

const destination = (yaml: string) => parseConfig(withDestination(yaml), '/etc/loyalty/jobs.yaml', {}).destination;

describe('where the raw archive is kept', () => {
  it('beside a DuckDB warehouse, beside the jobs file for PostgreSQL, or where destination.archive says, with its retention; none when false', () => {
    expect(archiveOf(destination('  type: duckdb\n  path: /data/loyalty.duckdb'), '/etc/loyalty/jobs.yaml')).toEqual({
      root: '/data/loyalty.archive',
    });
    expect(
      archiveOf(destination('  type: postgres\n  url: postgres://etl@db/loyalty'), '/etc/loyalty/jobs.yaml'),
    ).toEqual({
      root: '/etc/loyalty/loyalty.archive',
    });
    expect(
      archiveOf(
        destination(
          '  type: postgres\n  url: postgres://etl@db/loyalty\n  archive:\n    path: /archive\n    keep_days: 400\n    max_bytes: 1000000000',
        ),
        '/etc/loyalty/jobs.yaml',
      ),
    ).toEqual({ root: '/archive', keepDays: 400, maxBytes: 1_000_000_000 });
    expect(
      archiveOf(
        destination('  type: duckdb\n  path: /data/loyalty.duckdb\n  archive: false'),
        '/etc/loyalty/jobs.yaml',
      ),
    ).toBeUndefined();
  });

  it('names the key of a retention that is no whole number', () => {
    expect(() => destination('  type: duckdb\n  archive:\n    keep_days: -1')).toThrow(ConfigError);
    expect(() => destination('  type: duckdb\n  archive:\n    keep_days: -1')).toThrow(/destination\.archive/);
  });
});
