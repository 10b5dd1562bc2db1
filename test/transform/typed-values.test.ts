import { describe, expect, it } from 'vitest';
import { formatTypeOf, parseTypedValue } from '../../src/transform/typed-values.js';

describe('typed custom fields', () => {
  it('a format types a field for sure when it is a date or number pattern; no type code does', () => {
    expect(formatTypeOf('dd/MM/yyyy')).toEqual({ kind: 'date', format: 'dd/MM/yyyy' });
    expect(formatTypeOf(' #.##0,00 ')).toEqual({ kind: 'number', format: '#.##0,00' });
    expect(formatTypeOf('')).toBeNull();
    expect(formatTypeOf('upper case')).toBeNull();
    expect(formatTypeOf(null)).toBeNull();
  });

  it('reads dates by their luxon pattern, and real calendar days only', () => {
    const type = { kind: 'date', format: 'dd/MM/yyyy' } as const;
    expect(parseTypedValue(type, '05/03/2024')).toBe('2024-03-05');
    expect(parseTypedValue(type, ' 29/02/2024 ')).toBe('2024-02-29');
    for (const bad of ['31/02/2024', '2024-03-05', 'soon', '', '5/3/24x'])
      expect(parseTypedValue(type, bad), bad).toBeNull();
    expect(parseTypedValue({ kind: 'date', format: null }, '2024-03-05')).toBe('2024-03-05');
    expect(parseTypedValue({ kind: 'date', format: 'MMM d, yyyy' }, 'Mar 5, 2024')).toBe('2024-03-05');
  });

  it('reads numbers with the decimal comma or dot of their pattern, groups of three only', () => {
    const comma = { kind: 'number', format: '#.##0,00' } as const;
    expect(parseTypedValue(comma, '1.234,50')).toBe('1234.50');
    expect(parseTypedValue(comma, '-0,5')).toBe('-0.5');
    expect(parseTypedValue(comma, '12')).toBe('12');
    for (const bad of ['12,34,56', '1.23,4', 'n/a', 'about 50', '1,2.3', '9999999999999999'])
      expect(parseTypedValue(comma, bad), bad).toBeNull();
    const grouped = { kind: 'number', format: '#,##0' } as const;
    expect(parseTypedValue(grouped, '1,234')).toBe('1234');
    expect(parseTypedValue(grouped, '1,234.5')).toBe('1234.5');
    expect(parseTypedValue({ kind: 'number', format: null }, '3.25')).toBe('3.25');
    expect(parseTypedValue({ kind: 'number', format: null }, '3,25')).toBeNull();
  });

  it('reads the words for yes and no as booleans, and nothing else', () => {
    const type = { kind: 'boolean', format: null } as const;
    expect(['true', 'False', 'YES', 'n', '1', 'off'].map((v) => parseTypedValue(type, v))).toEqual([
      'true',
      'false',
      'true',
      'false',
      'true',
      'false',
    ]);
    expect(parseTypedValue(type, 'maybe')).toBeNull();
  });
});
