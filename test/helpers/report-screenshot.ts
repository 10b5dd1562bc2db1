/**
 * Writes docs/report.png, the README's picture of the status page: runs the demo (`npm start`'s command) in a
 * fresh folder, then photographs the page it writes in headless Chromium, with a window's details shown.
 *
 *   npx tsx test/helpers/report-screenshot.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { launchChromium, openWatched } from './browser.js';

const ROOT = resolve(import.meta.dirname, '../..');
const OUT = join(ROOT, 'docs/report.png');

const dir = mkdtempSync(join(tmpdir(), 'loyalty-demo-'));
try {
  execFileSync(process.execPath, [join(ROOT, 'node_modules/tsx/dist/cli.mjs'), join(ROOT, 'src/cli/bin.ts'), 'demo'], {
    cwd: dir,
    stdio: ['ignore', 'inherit', 'ignore'],
  });
  const browser = await launchChromium();
  try {
    const { page, problems } = await openWatched(browser, `file://${join(dir, 'demo-report.html')}`, {
      width: 1180,
      height: 1000,
    });
    const cell = page.locator('svg.cal[data-stream="surveys"] g.cells rect').nth(9);
    await cell.hover();
    await page.screenshot({ path: OUT, type: 'png', clip: { x: 0, y: 0, width: 1180, height: 1000 } });
    if (problems.length > 0) throw new Error(`the page logged: ${problems.join('; ')}`);
  } finally {
    await browser.close();
  }
  process.stdout.write(`${OUT}: ${Math.round(statSync(OUT).size / 1024)} KB\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
