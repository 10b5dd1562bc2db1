import { describe, expect, it } from 'vitest';
import { optionLabel, readChoiceList } from '../../src/transform/choice-lists.js';

const OPTIONS = [
  { key: 'wine', label: 'Wine' },
  { key: 'food', label: 'Food & drink' },
  { key: 'kids', label: 'Kids, family' },
  { key: 'arts', label: 'Arts' },
  { key: 'crafts', label: 'Crafts' },
  { key: 'arts;crafts', label: 'Arts; crafts' },
];

const keys = (value: string, form: Parameters<typeof readChoiceList>[2] = 'auto') => {
  const read = readChoiceList(value, OPTIONS, form);
  return 'options' in read ? read.options.map((o) => o.key) : read.problem;
};

describe('a multiple-choice value read as a list of options', () => {
  it('reads every form a service may send when only one list comes out of it', () => {
    expect(keys('wine,food')).toEqual(['wine', 'food']);
    expect(keys('wine;food')).toEqual(['wine', 'food']);
    expect(keys('wine | food')).toEqual(['wine', 'food']);
    expect(keys('["wine","kids"]')).toEqual(['wine', 'kids']);
    expect(keys('[]')).toEqual([]);
    expect(keys('wine')).toEqual(['wine']);
    // labels, one of them holding the separator
    expect(keys('Kids, family, Wine')).toEqual(['kids', 'wine']);
    expect(keys('Kids, family')).toEqual(['kids']);
    // an option holding a separator is read whole where nothing else reads
    expect(keys('wine,arts;crafts')).toEqual(['wine', 'arts;crafts']);
    expect(keys('arts;crafts|food')).toEqual(['arts;crafts', 'food']);
  });

  it('refuses a value that reads as two lists, and names both, never picking one', () => {
    const problem = keys('arts;crafts');
    expect(problem).toMatch(/more than one list of options/);
    expect(problem).toContain('["arts;crafts"]');
    expect(problem).toContain('["arts","crafts"]');
    expect(problem).toContain('source.multiple_choice');
    // the service's separator, once stated, settles it
    expect(keys('arts;crafts', 'comma')).toEqual(['arts;crafts']);
    expect(keys('arts;crafts', 'pipe')).toEqual(['arts;crafts']);
    // but joined by that very separator the two stay two
    expect(keys('arts;crafts', 'semicolon')).toMatch(/more than one list/);
    expect(keys('arts;crafts;wine', 'semicolon')).toMatch(/more than one list/);
  });

  it('refuses what names no list of the options, and the same option twice', () => {
    expect(keys('wine,beer')).toMatch(/is not a JSON array or options joined by/);
    expect(keys('wine,wine')).toMatch(/is not/);
    expect(keys('wine;food', 'comma')).toMatch(/is not options joined by ","/);
    expect(keys('wine,food', 'json')).toMatch(/is not a JSON array/);
    expect(keys('["wine","beer"]')).toMatch(/is not/);
  });

  it("reads a JSON array after JSON's white space only, as JSON.parse does", () => {
    expect(keys(' \t\r\n["wine","kids"] ', 'json')).toEqual(['wine', 'kids']);
    // white space JSON does not know (no-break space, byte order mark) makes no JSON array
    expect(keys('\u00a0["wine"]', 'json')).toMatch(/is not a JSON array/);
    expect(keys('\ufeff["wine"]', 'json')).toMatch(/is not a JSON array/);
    expect(keys('"wine"', 'json')).toMatch(/is not a JSON array/);
    expect(keys('["wine"', 'json')).toMatch(/is not a JSON array/);
  });

  it('gives a single choice its label by key, else by label', () => {
    expect(optionLabel('kids', OPTIONS)).toBe('Kids, family');
    expect(optionLabel('Arts', OPTIONS)).toBe('Arts');
    expect(optionLabel('beer', OPTIONS)).toBeNull();
  });
});
