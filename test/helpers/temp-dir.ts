import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';

/** A new directory under the test session's own temporary directory, which the session's teardown deletes. */
export function testTempDir(prefix: string): string {
  return mkdtempSync(join(inject('tempRoot'), prefix));
}
