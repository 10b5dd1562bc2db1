import type { z } from 'zod';

/** The first problem of a failed parse, as `field: message`. */
export function zodProblem(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const path = issue.path.map(String).join('.');
  return `${path || 'record'}: ${issue.message}`;
}
