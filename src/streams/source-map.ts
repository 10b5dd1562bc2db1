import { z } from 'zod';

/**
 * A JSON object of named values sent by the source (`customFieldMap`, `questAnsMap`, a survey's `questions`),
 * checked member by member and held as a Map. Its names are data: a name such as `__proto__`, `constructor` or
 * the empty string is a key like any other. `z.record` builds a plain object, where assigning `__proto__` sets
 * the object's prototype instead of adding the key, so such a custom field or answer vanished without a word.
 *
 * @example sourceMap(z.string()).parse(JSON.parse('{"__proto__": "x"}')).get('__proto__') // 'x'
 */
export function sourceMap<T extends z.ZodType>(value: T): z.ZodType<Map<string, z.output<T>>> {
  return z
    .custom<object>((input) => typeof input === 'object' && input !== null && !Array.isArray(input), {
      error: (issue) => `expected an object of named values, got ${describe(issue.input)}`,
    })
    .transform((input, ctx) => {
      const map = new Map<string, z.output<T>>();
      // JSON.parse makes every member an own property, `__proto__` included: Object.entries lists them all
      for (const [name, member] of Object.entries(input)) {
        const parsed = value.safeParse(member);
        if (!parsed.success) {
          for (const issue of parsed.error.issues)
            ctx.issues.push({ ...issue, path: [name, ...issue.path], input: member } as never);
          return z.NEVER;
        }
        map.set(name, parsed.data);
      }
      return map;
    });
}

function describe(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  return typeof input;
}
