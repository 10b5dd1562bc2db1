import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    setupFiles: ['test/helpers/quiet-output.ts', 'test/helpers/cpu-record.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Files run one after another in each worker's process, not in a process each: loading the modules again for
    // every file cost about a fifth of the suite's CPU. The modules a file imports are shared with the files after it
    // in that worker (setup files run again for each), so a file leaves no module state behind; what a command keeps
    // is reset by test/helpers/cli-host.ts after each run.
    isolate: false,
    // the CLI bundle a test runs in its own process (test/helpers/cli-host.ts) is loaded by Node as it is, not by vitest
    server: { deps: { external: [/\/\.test-dist\//] } },
    // A suite's emulator and the commands it runs share its worker's one thread, and wait on sockets, timers and
    // PostgreSQL a good part of the time: three files at a time keep two cores busy.
    maxWorkers: 3,
    // the default policy for analysts (personal_data: hash) needs a salt wherever they read something
    env: { LOYALTY_LOG_LEVEL: 'warn', LOYALTY_PII_SALT: 'test salt' },
  },
});
