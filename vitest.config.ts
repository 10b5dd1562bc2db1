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
    // Most suites wait on subprocesses, servers and sockets rather than on a core: two files at a time on two cores.
    maxWorkers: 2,
    // the default policy for analysts (personal_data: hash) needs a salt wherever they read something
    env: { LOYALTY_LOG_LEVEL: 'warn', LOYALTY_PII_SALT: 'test salt' },
  },
});
