/** A whole number with thousands separators: `12,345`. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** `n thing` or `n things`. */
export function plural(n: number, thing: string): string {
  return `${formatCount(n)} ${thing}${n === 1 ? '' : 's'}`;
}

/** A duration the way a reader scans a column of them: `0.4 s`, `12 s`, `3 min 05 s`, `2 h 04 min`. */
export function formatDuration(seconds: number): string {
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** A warehouse instant (ISO text in UTC) to the minute: `2024-05-01 02:30 UTC`. */
export function formatInstant(instant: string | null): string {
  return instant ? `${instant.slice(0, 16).replace('T', ' ')} UTC` : '–';
}

/** A share as a percentage with one decimal: `1.5%`. */
export function formatShare(part: number, whole: number): string {
  return whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '–';
}

/** A text cut to `max` characters, for a table cell (the full text is in the row's title or details). */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
