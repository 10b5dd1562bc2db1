/** A staged value as the loader hands it over: text, a number, or SQL NULL. */
export type CopyValue = string | number | null | undefined;

/** The characters COPY's text format gives a meaning to, and how each is written inside a field. */
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const SPECIAL = /[\\\t\n\r]/g;
// NUL is the one character COPY text cannot carry
// eslint-disable-next-line no-control-regex
const HAS_SPECIAL = /[\\\t\n\r\u0000]/;

/**
 * One field of PostgreSQL's COPY text format: `\N` for NULL; otherwise the text with backslash, tab, newline
 * and carriage return escaped, so a value can never end its field or its row (nor be read as the `\.`
 * end-of-data marker, whose backslash is doubled). PostgreSQL text cannot hold U+0000; such a value is refused
 * here with a clear message rather than by the server in the middle of a COPY.
 *
 * @example
 * copyTextValue('a\tb\\c') // 'a\\tb\\\\c'
 * copyTextValue(null)      // '\\N'
 */
export function copyTextValue(value: CopyValue): string {
  if (value === null || value === undefined) return '\\N';
  const text = typeof value === 'string' ? value : String(value);
  // most values hold none of these: one test, no copy
  if (!HAS_SPECIAL.test(text)) return text;
  if (text.includes('\u0000'))
    throw new RangeError('a value holds the character U+0000, which PostgreSQL text cannot store');
  return text.replace(SPECIAL, (c) => ESCAPES[c]!);
}

/**
 * One row of COPY text: fields joined by tabs, ended by a newline.
 *
 * @example
 * copyTextRow(['C1', null, 'x\ny']) // 'C1\t\\N\tx\\ny\n'
 */
export function copyTextRow(values: readonly CopyValue[]): string {
  // join builds one flat string; `+=` would build a rope of a node per piece, several times the text's size
  // for as long as the line waits for its COPY
  const fields = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) fields[i] = copyTextValue(values[i]);
  return `${fields.join('\t')}\n`;
}
