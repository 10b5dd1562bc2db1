import { describe, expect, it } from 'vitest';
import { unlistedJson, unlistedMembers, unlistedPaths } from '../../src/transform/unlisted.js';

describe('members the spec does not list', () => {
  it('are found by name, whatever the name, and kept with their values as sent', () => {
    const record = JSON.parse(
      '{"code":"A","__proto__":{"x":1},"constructor":null,"":"empty name","nested":{"a":[1,true]}}',
    ) as unknown;
    const members = unlistedMembers(record, new Set(['code']), 'voucher.');
    expect(members.map(([path]) => path)).toEqual([
      'voucher.__proto__',
      'voucher.constructor',
      'voucher.',
      'voucher.nested',
    ]);
    const json = unlistedJson(members)!;
    expect(unlistedPaths(json)).toEqual(['voucher.__proto__', 'voucher.constructor', 'voucher.', 'voucher.nested']);
    expect(JSON.parse(json)).toHaveProperty(['voucher.nested'], { a: [1, true] });
  });

  it('are none for a record of listed members only, or no object at all', () => {
    expect(unlistedJson(unlistedMembers({ code: 'A' }, new Set(['code'])))).toBeNull();
    for (const notAnObject of [null, 'text', [1, 2], 3]) expect(unlistedMembers(notAnObject, new Set())).toEqual([]);
  });

  it('write a NUL and a lone surrogate so that PostgreSQL jsonb takes them', () => {
    const json = unlistedJson([
      ['na\u0000me', 'va\u0000lue\ud800'],
      ['deep', JSON.parse('{"k\\u0000":["\\u0000"],"__proto__":1}')],
    ])!;
    // no NUL, and no JSON escape of one (jsonb refuses both): the backslash of `\u0000` is itself escaped
    expect(json).not.toContain('\u0000');
    expect(json).not.toMatch(/[^\\]\\u0000/);
    expect(JSON.parse(json)).toEqual({
      'na\\u0000me': 'va\\u0000lue\ufffd',
      deep: JSON.parse('{"k\\\\u0000":["\\\\u0000"],"__proto__":1}'),
    });
  });
});
