import { z } from 'zod';

/**
 * A customer's id as the source sends it: text that is not blank. It keys rows in both warehouses, so it must
 * not hold the character U+0000, which PostgreSQL text cannot store: such a record is rejected, not loaded under
 * another id.
 */
export const customerIdSchema = z
  .string()
  .refine((s) => s.trim().length > 0, 'must not be empty')
  .refine((s) => !s.includes('\u0000'), 'must not hold the character U+0000');
