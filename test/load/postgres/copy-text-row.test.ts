import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyTextRow, copyTextValue } from '../../../src/load/postgres/copy-text-row.js';

/**
 * Reads one line of COPY text back the way PostgreSQL does (fields split on raw tabs; `\N` alone is NULL;
 * `\\`, `\t`, `\n`, `\r` and the other backslash escapes), so encoding can be checked against decoding.
 */
function parseCopyLine(line: string): Array<string | null> {
  expect(line.endsWith('\n')).toBe(true);
  const body = line.slice(0, -1);
  expect(body).not.toMatch(/[\n\r]/);
  return body.split('\t').map((field) => {
    if (field === '\\N') return null;
    return field.replace(
      /\\(.)/gs,
      (_, c: string) => ({ t: '\t', n: '\n', r: '\r', b: '\b', f: '\f', v: '\v', '\\': '\\' })[c] ?? c,
    );
  });
}

const HOSTILE = [
  '',
  ' ',
  'plain',
  'back\\slash',
  '\\',
  '\\\\',
  '\\N',
  'N',
  'NULL',
  '\\.',
  '\\.\n',
  'tab\there',
  '\t',
  'new\nline',
  'cr\rhere',
  '\r\n',
  'trailing backslash\\',
  '\\t literal',
  "it's",
  '"quoted"',
  '\b\f\v\u0001\u001b\u007f',
  'ünï ⭐ 日本語 مرحبا 😀 e\u0301 \u200d \ufeff',
  'v\t\\\n'.repeat(2_500),
];

describe('COPY text encoding', () => {
  it('writes NULL as \\N and an empty string as an empty field', () => {
    expect(copyTextValue(null)).toBe('\\N');
    expect(copyTextValue(undefined)).toBe('\\N');
    expect(copyTextValue('')).toBe('');
    expect(copyTextRow([null, '', 'x'])).toBe('\\N\t\tx\n');
  });

  it('escapes backslash, tab, newline and carriage return, and nothing else', () => {
    expect(copyTextValue('a\\b\tc\nd\re')).toBe('a\\\\b\\tc\\nd\\re');
    expect(copyTextValue('\\N')).toBe('\\\\N');
    expect(copyTextValue('\\.')).toBe('\\\\.');
    expect(copyTextValue('ünï ⭐ "q" \'s\'')).toBe('ünï ⭐ "q" \'s\'');
  });

  it('writes numbers as their text', () => {
    expect(copyTextRow([1, 2.5, -0.25])).toBe('1\t2.5\t-0.25\n');
  });

  it('round-trips every hostile value, alone and side by side in one row', () => {
    for (const value of HOSTILE) expect(parseCopyLine(copyTextRow([value]))).toEqual([value]);
    expect(parseCopyLine(copyTextRow([...HOSTILE, null]))).toEqual([...HOSTILE, null]);
  });

  it('round-trips any text: one field per value, one line per row', () => {
    const value = fc.oneof(fc.string({ unit: 'binary' }), fc.stringMatching(/^[\\\t\n\rN.a]*$/), fc.constant(null));
    fc.assert(
      fc.property(
        fc.array(
          value.filter((v) => v === null || !v.includes('\u0000')),
          { minLength: 1, maxLength: 8 },
        ),
        (values) => {
          expect(parseCopyLine(copyTextRow(values))).toEqual(values);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses U+0000, which PostgreSQL text cannot hold, with a message that says so', () => {
    expect(() => copyTextValue('a\u0000b')).toThrow(/U\+0000/);
  });
});
