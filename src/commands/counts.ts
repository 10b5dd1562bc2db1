/** Thousands grouped the same way whatever the machine's locale, so summaries read the same everywhere. */
const grouped = new Intl.NumberFormat('en-US');

/** `n` with its thousands grouped, e.g. `5,314`. */
export function count(n: number): string {
  return grouped.format(n);
}

/** `n` and its noun, singular for one: `1 window`, `3,000 windows`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}
