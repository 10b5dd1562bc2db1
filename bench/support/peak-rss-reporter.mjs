// Preloaded (`node --import`) into a `loyalty-etl` process the bench runs: when the process exits, its peak
// resident set (VmHWM of /proc/self/status, in kB) and the CPU time it used (user and system, every thread of the
// process, DuckDB's included, in µs) are written as JSON to the file named by BENCH_PEAK_RSS_FILE.
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.env.BENCH_PEAK_RSS_FILE;
if (file) {
  process.on('exit', () => {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
    const cpu = process.cpuUsage();
    writeFileSync(
      file,
      JSON.stringify({ peakRssKb: kb === undefined ? null : Number(kb), cpuMicros: cpu.user + cpu.system }),
    );
  });
}
