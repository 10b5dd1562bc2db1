import { vi } from 'vitest';

/** Runs `fn` with process.stdout captured; returns what it wrote, and its error if it threw. */
export async function captureStdout(fn: () => Promise<unknown>): Promise<{ out: string; error: unknown }> {
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    await fn();
    return { out, error: undefined };
  } catch (error) {
    return { out, error };
  } finally {
    spy.mockRestore();
  }
}
