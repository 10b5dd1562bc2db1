const secrets = new Set<string>();

/** Registers a value (a token, a password) that must never be written anywhere; also its URL-encoded form. */
export function registerSecret(value: string | undefined): void {
  if (!value || value.length < 3) return;
  secrets.add(value);
  secrets.add(encodeURIComponent(value));
  secrets.add(JSON.stringify(value).slice(1, -1));
}

/**
 * Forgets every registered secret: for a program that runs several commands in its own process (the test suite),
 * so that one command's secrets are not redacted by the next one's output for it.
 */
export function forgetSecrets(): void {
  secrets.clear();
}

/** Replaces every registered secret in `text` with `[REDACTED]`. */
export function redact(text: string): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('[REDACTED]');
  return out;
}

/** Removes user:password from database URLs so they can be shown. */
export function redactUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]+):[^@/]*@/, '$1:[REDACTED]@');
}
