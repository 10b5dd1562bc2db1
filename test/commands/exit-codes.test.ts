import { describe, expect, it } from 'vitest';
import { EXIT_CODE_OF_KIND, ExitCode } from '../../src/commands/exit-codes.js';
import { ConfigError } from '../../src/config/config-error.js';
import {
  UnsafeTargetError,
  WarehouseBusyError,
  WarehouseConfigError,
  WarehouseConnectionError,
  WarehouseLockTimeoutError,
  WarehouseNewerError,
} from '../../src/load/warehouse/warehouse-errors.js';
import { RunInterruptedError } from '../../src/pipeline/pipeline-errors.js';
import { KindedError } from '../../src/plan/error-kind.js';
import { AuthenticationError, RetriableSourceError } from '../../src/source/source-errors.js';
import { JobBusyError } from '../../src/state/state-errors.js';
import { SpoolFolderError } from '../../src/webhook/webhook-errors.js';

describe('the exit code of each kind of error', () => {
  it.each([
    ['a config key', new ConfigError('jobs.yaml', 'jobs', 'wrong'), ExitCode.usage],
    ['a warehouse path', new WarehouseConfigError('x'), ExitCode.usage],
    ['a spool folder', new SpoolFolderError('x'), ExitCode.usage],
    ['a target that is no file', new UnsafeTargetError('x'), ExitCode.usage],
    ['a warehouse out of reach', new WarehouseConnectionError('x'), ExitCode.unreachable],
    ['a source down', new RetriableSourceError('x', 'profiles'), ExitCode.unreachable],
    ['credentials refused', new AuthenticationError('x', 'profiles', 401), ExitCode.unreachable],
    ['a DuckDB file held', new WarehouseBusyError('x'), ExitCode.busy],
    ['a lock held', new WarehouseLockTimeoutError('x'), ExitCode.busy],
    ['a job already running', new JobBusyError('x'), ExitCode.busy],
    ['a warehouse of a newer release', new WarehouseNewerError('x'), ExitCode.newerWarehouse],
    ['an interrupt', new RunInterruptedError('SIGINT'), ExitCode.interrupted],
  ])('%s', (_what, error, code) => {
    expect(error).toBeInstanceOf(KindedError);
    expect(EXIT_CODE_OF_KIND[(error as KindedError).kind]).toBe(code);
  });

  it('keeps the documented codes', () => {
    expect(ExitCode).toMatchObject({ windowsFailed: 1, unreachable: 1, usage: 2, busy: 3, newerWarehouse: 8 });
    expect([ExitCode.interrupted, ExitCode.terminated]).toEqual([130, 143]);
  });
});
