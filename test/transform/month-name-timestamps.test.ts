import { describe, expect, it } from 'vitest';
import { parseSourceTimestamp } from '../../src/transform/timestamps.js';

describe('the month-name style of the spec (an integration’s created): Mon DD, YYYY H:MM:SS AM/PM', () => {
  it.each([
    ['Mar 4, 2021 3:07:12 PM', 'UTC', '2021-03-04T15:07:12.000Z'],
    ['Mar 4, 2021 3:07:12 AM', 'UTC', '2021-03-04T03:07:12.000Z'],
    ['Oct 15, 2023 10:05:09 AM', 'UTC', '2023-10-15T10:05:09.000Z'],
    ['Oct 15, 2023 10:05:09 PM', 'UTC', '2023-10-15T22:05:09.000Z'],
    ['Dec 31, 2021 11:59:59 PM', 'UTC', '2021-12-31T23:59:59.000Z'],
    ['Jan 1, 2022 12:00:00 AM', 'UTC', '2022-01-01T00:00:00.000Z'],
    ['Jan 1, 2022 12:30:00 AM', 'UTC', '2022-01-01T00:30:00.000Z'],
    ['Jan 1, 2022 12:00:00 PM', 'UTC', '2022-01-01T12:00:00.000Z'],
    ['Jan 01, 2022 1:00:00 PM', 'UTC', '2022-01-01T13:00:00.000Z'],
    ['Mar 4, 2021 3:07:12 PM', 'Europe/Athens', '2021-03-04T13:07:12.000Z'],
    ['Jul 4, 2021 3:07:12 PM', 'Europe/Athens', '2021-07-04T12:07:12.000Z'],
    ['Mar 4, 2021 3:07:12 PM UTC', 'Europe/Athens', '2021-03-04T15:07:12.000Z'],
    ['Mar 4, 2021 3:07:12 pm', 'UTC', '2021-03-04T15:07:12.000Z'],
  ])('%s in %s is %s', (text, zone, utc) => {
    expect(parseSourceTimestamp(text, zone, 'created')).toBe(utc);
  });

  it.each([
    'Mar 4, 2021 13:07:12 PM',
    'Mar 4, 2021 0:07:12 AM',
    'Foo 4, 2021 3:07:12 PM',
    'Feb 30, 2021 3:07:12 PM',
    'Mar 4, 2021 3:61:12 PM',
  ])('%s is no time: a record error naming the field', (text) => {
    expect(() => parseSourceTimestamp(text, 'UTC', 'created')).toThrow(/created/);
  });
});
