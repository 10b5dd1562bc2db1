import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/quiet-output.ts', 'test/helpers/cpu-record.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // the CLI bundle a test runs in its own process (test/helpers/cli-host.ts) is loaded by Node as it is, not by vitest
    server: { deps: { external: [/\/\.test-dist\//] } },
    // A suite's emulator and the commands it runs share its worker's one thread, and wait on sockets, timers and
    // PostgreSQL a good part of the time: three files at a time keep two cores busy.
    maxWorkers: 3,
    // the default policy for analysts (personal_data: hash) needs a salt wherever they read something
    env: { LOYALTY_LOG_LEVEL: 'warn', LOYALTY_PII_SALT: 'test salt' },
  },
});
