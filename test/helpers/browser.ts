import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's Chromium: `.ci/run` installs it when it is missing. No browser is downloaded at run time. */
export const CHROMIUM = '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Starts headless Chromium; without it, fails with what to install rather than skipping the test. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}: the browser tests need Debian's chromium package (apt-get install -y chromium; .ci/run installs it when missing)`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}

/** A page and what went wrong on it: console errors, uncaught exceptions, and any request that left the page's own URL. */
export interface WatchedPage {
  page: Page;
  problems: string[];
  /** Requests to anything but the page itself (and `data:`): a self-contained page makes none. */
  requests: string[];
}

/** Opens `url` in a new page of `browser`, recording its console errors, page errors and outside requests. */
export async function openWatched(
  browser: Browser,
  url: string,
  viewport = { width: 1200, height: 900 },
): Promise<WatchedPage> {
  const page = await browser.newPage({ viewport });
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning')
      problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    if (request.url() !== url && !request.url().startsWith('data:')) requests.push(request.url());
  });
  await page.goto(url, { waitUntil: 'load' });
  return { page, problems, requests };
}
