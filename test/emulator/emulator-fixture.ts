import { DateTime } from 'luxon';
import type { Emulator, StartEmulatorOptions } from '../../src/emulator/index.js';
import { startEmulator } from '../../src/emulator/index.js';

/** A small dataset whose 90 days (2024-08-18..2024-11-15) include the Athens clock change of 2024-10-27. */
export const DATASET = { seed: 7, accounts: 300, endDate: '2024-11-15' } as const satisfies StartEmulatorOptions;
export const ZONE = 'Europe/Athens';
export const FIRST_DAY = '2024-08-18';
export const LAST_DAY = '2024-11-15';

/** Starts an emulator for one test file; close it in afterAll. */
export function start(options: StartEmulatorOptions = {}): Promise<Emulator> {
  return startEmulator({ ...DATASET, ...options });
}

/** A GET (or other method) returning status and parsed JSON body. */
export async function call(
  emulator: Emulator,
  path: string,
  init?: RequestInit,
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${emulator.url}${path}`, init);
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/** The raw text of a GET, for byte-for-byte comparisons. */
export async function text(emulator: Emulator, path: string): Promise<string> {
  return (await fetch(`${emulator.url}${path}`)).text();
}

/** Every record of an export window, page by page, checking the page envelope on the way. */
export async function allPages(
  emulator: Emulator,
  stream: 'accounts' | 'surveys',
  start: string,
  end: string,
  size = 50,
): Promise<{ totalCount: number; records: any[] }> {
  const records: any[] = [];
  let totalCount = -1;
  for (let page = 1; ; page++) {
    const { status, body } = await call(
      emulator,
      `/business-data/${stream}?start=${start}&end=${end}&page=${page}&size=${size}`,
    );
    if (status !== 200) throw new Error(`page ${page}: HTTP ${status} ${JSON.stringify(body)}`);
    if (body.pageNumber !== page || body.pageSize !== size) throw new Error('page envelope does not echo the request');
    if (totalCount >= 0 && body.totalCount !== totalCount) throw new Error('totalCount changed between pages');
    totalCount = body.totalCount;
    if (body.data.length === 0) break;
    records.push(...body.data);
  }
  return { totalCount, records };
}

/** Every posting of a customer, page by page. */
export async function allPostings(emulator: Emulator, identity: string, pageSize = 100): Promise<any[]> {
  const postings: any[] = [];
  for (let page = 1; ; page++) {
    const { status, body } = await call(
      emulator,
      `/accounts/loyalty/postings?${identity}&pageSize=${pageSize}&pageNumber=${page}`,
    );
    if (status !== 200) throw new Error(`HTTP ${status} ${JSON.stringify(body)}`);
    postings.push(...body.data);
    if (postings.length >= body.totalCount) return postings;
  }
}

/** The value a warehouse stores for a served text: "NULL" and "" are missing. */
export function canonical(value: unknown): unknown {
  return value === 'NULL' || value === '' || value === undefined ? null : value;
}

const SOURCE_TIMESTAMP = /^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})( UTC)?$/;

/** A served account/survey timestamp read back independently: zone-less means local time in `zone`. */
export function readTimestamp(value: unknown, zone = ZONE): string | null {
  const present = canonical(value);
  if (present === null) return null;
  const match = SOURCE_TIMESTAMP.exec(String(present));
  if (!match) throw new Error(`not a source timestamp: ${String(present)}`);
  const parsed = DateTime.fromFormat(match[1]!, 'yyyy-MM-dd HH:mm:ss', { zone: match[2] ? 'UTC' : zone });
  return parsed.toUTC().toISO();
}

/** A served posting time (`YYYY-MM-DDTHH:MM:SS.mmm+0000`) as ISO UTC. */
export function readPostingTime(value: string): string {
  const parsed = DateTime.fromFormat(value, "yyyy-MM-dd'T'HH:mm:ss.SSSZZZ", { setZone: true });
  if (!parsed.isValid) throw new Error(`not a posting time: ${value}`);
  return parsed.toUTC().toISO()!;
}

/** Day (`YYYY-MM-DD`) of an ISO instant in the zone. */
export function dayOf(iso: string, zone = ZONE): string {
  return DateTime.fromISO(iso, { zone }).toISODate()!;
}

/** The days from `start` to `end`, inclusive. */
export function daysBetween(start: string, end: string): string[] {
  const days: string[] = [];
  for (let day = DateTime.fromISO(start); day.toISODate()! <= end; day = day.plus({ days: 1 }))
    days.push(day.toISODate()!);
  return days;
}

/** Parses an NDJSON body. */
export function parseNdjson(body: string): unknown[] {
  return body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}
