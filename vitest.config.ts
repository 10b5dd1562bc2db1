import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/quiet-output.ts', 'test/helpers/cpu-record.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Most suites wait on subprocesses, servers and sockets rather than on a core: two files at a time on two cores.
    maxWorkers: 2,
    // the default policy for analysts (personal_data: hash) needs a salt wherever they read something
    env: { LOYALTY_LOG_LEVEL: 'warn', LOYALTY_PII_SALT: 'test salt' },
  },
});
