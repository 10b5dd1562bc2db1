/** A pass/fail verdict of a section against one of its targets. */
export interface BenchCheck {
  name: string;
  passed: boolean;
  /** The measured value against the target, in words. */
  detail: string;
}

/** What one section measured: its settings, a table to print, its verdicts and any raw data for the JSON file. */
export interface SectionResult {
  settings: Record<string, unknown>;
  rows: Array<Record<string, string | number>>;
  checks: BenchCheck[];
  /** Lines printed under the table: how to read it. */
  notes?: string[];
  data?: unknown;
}

/**
 * One measurement of `npm run bench`. Sections are independent: each starts what it needs (an emulator, a
 * warehouse) and stops it, so a section can be added, or run alone (`npm run bench -- <name>`), without
 * touching the others.
 */
export interface BenchSection {
  /** Short, kebab-case; the key of the section in the results file. */
  name: string;
  /** One line: what is measured and the target. */
  title: string;
  run(): Promise<SectionResult>;
}
