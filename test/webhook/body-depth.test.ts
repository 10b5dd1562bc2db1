import { describe, expect, it } from 'vitest';
import { nestingOver } from '../../src/webhook/webhook-calls.js';

describe('the nesting of a webhook body, measured before it is parsed', () => {
  it('counts arrays and objects, not brackets inside strings or after escaped quotes', () => {
    expect(nestingOver('{"a":[{"b":[]}]}', 4)).toBe(false);
    expect(nestingOver('{"a":[{"b":[[]]}]}', 4)).toBe(true);
    expect(nestingOver(`{"a":"${'['.repeat(100)}"}`, 2)).toBe(false);
    expect(nestingOver(`{"a":"\\"${'{'.repeat(100)}\\\\"}`, 2)).toBe(false);
    // an escaped backslash ends before the quote that closes the string
    expect(nestingOver(`{"a":"\\\\",${'['.repeat(3)}${']'.repeat(3)}}`, 3)).toBe(true);
    expect(nestingOver('['.repeat(10_000) + ']'.repeat(10_000), 64)).toBe(true);
  });
});
