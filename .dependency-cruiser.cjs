/**
 * The imports that must never be (docs/architecture.md, "Never"), checked by `npm run check:architecture`
 * in CI. Each rule names the parts of `src/` as docs/architecture.md does, and says why in its comment.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circles',
      comment: 'Two files that need each other are one thing in two places: a reader cannot start at either.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'stages-take-the-resolved-plan',
      comment:
        'jobs.yaml is read once, by the command line: stages take the resolved plan (plan/job-plan.ts), not the config.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/(cli|commands|config)/', '^src/index\\.ts$'] },
      to: { path: '^src/config/' },
    },
    {
      name: 'transform-is-pure',
      comment: 'Transforms are pure functions: no load, source or state.',
      severity: 'error',
      from: { path: '^src/transform/' },
      to: { path: '^src/(load|source|state)/' },
    },
    {
      name: 'source-knows-no-database-or-config',
      comment: 'The source client takes options, not the jobs file, and knows no database.',
      severity: 'error',
      from: { path: '^src/source/' },
      to: { path: '^src/(load|state|config)/' },
    },
    {
      name: 'extract-hands-records-on',
      comment: 'Extractors read and hand records on; the pipeline commits.',
      severity: 'error',
      from: { path: '^src/extract/' },
      to: { path: '^src/(load|state)/' },
    },
    {
      name: 'load-writes-rows-only',
      comment: 'The loader writes rows; the pipeline records windows and moves watermarks.',
      severity: 'error',
      from: { path: '^src/load/' },
      to: { path: '^src/state/' },
    },
    {
      name: 'load-dialects-apart',
      comment: 'duckdb/ and postgres/ are the same shape side by side: what both need lives in the rooms of load/.',
      severity: 'error',
      from: { path: '^src/load/(duckdb|postgres)/' },
      to: { path: '^src/load/(duckdb|postgres)/', pathNot: '^src/load/$1/' },
    },
    {
      name: 'load-only-the-opening-picks-a-dialect',
      comment:
        "The rooms of load/ serve both warehouses; only the registry of warehouses (load/warehouses.ts) chooses one's folder.",
      severity: 'error',
      from: {
        path: '^src/load/',
        pathNot: ['^src/load/(duckdb|postgres)/', '^src/load/warehouses\\.ts$'],
      },
      to: { path: '^src/load/(duckdb|postgres)/' },
    },
    {
      name: 'one-front-door-for-the-warehouse',
      comment:
        'The warehouse is chosen once, from the destination settings, by the registry of warehouses ' +
        '(load/warehouses.ts): the commands and every other part ask its entry and never test which database it is.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/load/' },
      to: { path: '^src/load/(duckdb|postgres)/' },
    },
    {
      name: 'load-warehouse-is-the-ground-floor',
      comment:
        'load/warehouse/ (connection, identifiers, dialect, migrations) stands on nothing of load/ but the table specs.',
      severity: 'error',
      from: { path: '^src/load/warehouse/' },
      to: { path: '^src/load/', pathNot: ['^src/load/warehouse/', '^src/load/table-spec\\.ts$'] },
    },
    {
      name: 'load-merge-runs-in-a-span-load',
      comment: "A span's merge runs inside the span load of a dialect: staging, history and derived objects serve it.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/load/(merge|duckdb|postgres)/' },
      to: { path: '^src/load/merge/' },
    },
    {
      name: 'stages-know-no-command-line',
      comment: 'Load, state, pipeline and streams know nothing of the command line.',
      severity: 'error',
      from: { path: '^src/(load|state|pipeline|streams)/' },
      to: { path: '^src/(cli|commands)/' },
    },
    {
      name: 'commands-never-reach-up-to-cli',
      comment:
        'The command line (cli/) imports the commands; a command importing cli/ would be an arrow back up. What both ' +
        'need (exit codes, CommandError) lives in commands/.',
      severity: 'error',
      from: { path: '^src/commands/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'streams-declare',
      comment: "Streams declare; the pipeline loads: no destination's SQL, only table specs.",
      severity: 'error',
      from: { path: '^src/streams/' },
      to: { path: '^src/load/', pathNot: '^src/load/table-spec\\.ts$' },
    },
    {
      name: 'emulator-stands-alone',
      comment: 'The emulator imports nothing outside emulator/.',
      severity: 'error',
      from: { path: '^src/emulator/' },
      to: { path: '^src/', pathNot: '^src/emulator/' },
    },
    {
      name: 'pipeline-never-reaches-the-emulator',
      comment: 'Only the emulator and demo commands (and the library index) may start the emulator.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/emulator/', '^src/commands/(emulator|demo)\\.ts$', '^src/index\\.ts$'] },
      to: { path: '^src/emulator/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    exclude: { path: '^(test|bench|dist|\\.test-dist|\\.bench-dist)/' },
  },
};
