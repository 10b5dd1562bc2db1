import type { Random } from './random.js';
import { type ZoneClock, formatUtcWall } from './zone-clock.js';

/** The ways the source writes a missing value; all three mean SQL NULL. */
export const MISSING_FORMS = [null, 'NULL', ''] as const;

/** Renders a text value, writing a missing one in one of its three forms. */
export function renderText(value: string | null, random: Random): string | null {
  // Draw even for present values so a value's form never shifts the draws of the fields after it.
  const form = random.pick(MISSING_FORMS);
  return value ?? form;
}

/**
 * Renders an instant the way account and survey timestamps come: `YYYY-MM-DD HH:MM:SS` meaning local
 * time in the zone, or `YYYY-MM-DD HH:MM:SS UTC`. A local time that falls in the repeated hour of a
 * clock change is always labelled, because without the label it would name two instants.
 */
export function renderTimestamp(ms: number | null, random: Random, clock: ZoneClock): string | null {
  const form = random.pick(MISSING_FORMS);
  const labelled = random.chance(0.35);
  if (ms === null) return form;
  return labelled || clock.isAmbiguousLocal(ms) ? `${formatUtcWall(ms)} UTC` : clock.formatLocal(ms);
}

/** The canonical value of a served text: "NULL" and "" are missing. */
export function canonicalText(value: string | null | undefined): string | null {
  return value === undefined || value === null || value === 'NULL' || value === '' ? null : value;
}
