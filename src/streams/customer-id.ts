import { z } from 'zod';
import { RecordError } from '../transform/record-error.js';
import { zodProblem } from './zod-problem.js';

/**
 * A customer's id as the source sends it: text that is not blank. It keys rows in both warehouses, so it must
 * not hold the character U+0000, which PostgreSQL text cannot store: such a record is rejected, not loaded under
 * another id.
 */
export const customerIdSchema = z
  .string()
  .refine((s) => s.trim().length > 0, 'must not be empty')
  .refine((s) => !s.includes('\u0000'), 'must not hold the character U+0000');

/**
 * A record's `customerId` as {@link customerIdSchema} reads it, trimmed, or a RecordError with the schema's first
 * problem. The checks the schema makes are made here first, so a valid id (nearly every record's) costs no parse.
 */
export function readCustomerId(value: unknown): string {
  if (typeof value === 'string' && value.trim().length > 0 && !value.includes('\u0000')) return value.trim();
  const id = customerIdSchema.safeParse(value);
  if (id.success) return id.data.trim();
  throw new RecordError('', zodProblem(id.error).replace(/^record:/, 'customerId:'));
}

/**
 * An export record with its customer's id under `customerId`. The spec's tables name it `customerId` in the
 * accounts export and in survey answers, while the identity block, the profile and search results name it
 * `accountId`; a service may use either. A record naming only `accountId` is read as naming `customerId`; one naming
 * both, differently, cannot be keyed and is rejected. Any other record is returned as it is.
 */
export function withCustomerId(record: unknown): unknown {
  if (!record || typeof record !== 'object' || Array.isArray(record) || !('accountId' in record)) return record;
  const { accountId, ...rest } = record as Record<string, unknown>;
  if (!('customerId' in rest)) return { ...rest, customerId: accountId };
  if (rest.customerId !== accountId && accountId !== null && accountId !== undefined)
    throw new RecordError(
      'customerId',
      `customerId ${JSON.stringify(rest.customerId)} and accountId ${JSON.stringify(accountId)} name different customers`,
    );
  return record;
}
