import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keySuffix, pivotColumnName, snakeCase } from '../../src/transform/column-names.js';

describe('pivot column names', () => {
  it('makes lower snake case ASCII', () => {
    expect(snakeCase('Favourite Store')).toBe('favourite_store');
    expect(snakeCase('loyaltyTier')).toBe('loyalty_tier');
    expect(snakeCase('Ünïcödé naam')).toBe('unicode_naam');
    expect(snakeCase("Robert'); DROP TABLE accounts;--")).toBe('robert_drop_table_accounts');
  });

  it('gives colliding keys distinct, stable names', () => {
    const taken = new Set<string>();
    const names = ['Favourite Store', 'favourite-store', 'favourite_store'].map((k) => {
      const n = pivotColumnName('cf_', k, taken);
      taken.add(n);
      return n;
    });
    expect(names[0]).toBe('cf_favourite_store');
    expect(names[1]).toBe(`cf_favourite_store_${keySuffix('favourite-store')}`);
    expect(new Set(names).size).toBe(3);
  });

  it('keeps every name short, ASCII and prefixed, whatever the key', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 600 }), (key) => {
        const name = pivotColumnName('cf_', key, new Set());
        expect(name).toMatch(/^cf_[a-z0-9_]+$/);
        expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63);
      }),
    );
  });
});
