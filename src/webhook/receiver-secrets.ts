import { ReceiverSecretError } from './webhook-errors.js';
/** The receiver's secret: the one the service's subscriber address (or header) carries. */
export const WEBHOOK_SECRET_ENV = 'LOYALTY_WEBHOOK_SECRET';
/** During a rotation, the secret being replaced: still accepted until the service sends only the new one. */
export const WEBHOOK_SECRET_PREVIOUS_ENV = 'LOYALTY_WEBHOOK_SECRET_PREVIOUS';
/** Shortest secret accepted: 32 characters, even of hex digits alone, are 128 bits, beyond any guessing. */
export const MIN_SECRET_LENGTH = 32;

// Characters a URL never percent-encodes, so a secret reads the same in a path, a header and a support ticket.
const SECRET_CHARACTERS = /^[A-Za-z0-9._~-]+$/;

/**
 * What is wrong with a secret, or null when it is fit: at least {@link MIN_SECRET_LENGTH} characters, all of
 * `A-Z a-z 0-9 . _ ~ -`. The answer never quotes the value.
 *
 * @example secretProblem('hunter2') // 'is 7 characters long; at least 32 are needed (e.g. openssl rand -hex 32)'
 */
export function secretProblem(value: string): string | null {
  if (!SECRET_CHARACTERS.test(value))
    return 'may hold only the characters A-Z a-z 0-9 . _ ~ - (e.g. openssl rand -hex 32)';
  if (value.length < MIN_SECRET_LENGTH)
    return `is ${value.length} characters long; at least ${MIN_SECRET_LENGTH} are needed (e.g. openssl rand -hex 32)`;
  return null;
}

/**
 * The secrets a call may carry, from the environment: {@link WEBHOOK_SECRET_ENV}, then
 * {@link WEBHOOK_SECRET_PREVIOUS_ENV} if set. Empty when neither is set (the caller decides whether that is
 * allowed); throws {@link ReceiverSecretError} for a weak secret, or a previous one without a current one.
 */
export function readReceiverSecrets(env: NodeJS.ProcessEnv = process.env): string[] {
  const current = env[WEBHOOK_SECRET_ENV] ?? '';
  const previous = env[WEBHOOK_SECRET_PREVIOUS_ENV] ?? '';
  if (current === '' && previous !== '')
    throw new ReceiverSecretError(
      `${WEBHOOK_SECRET_PREVIOUS_ENV} is set but ${WEBHOOK_SECRET_ENV} is not: a rotation needs the new secret too`,
    );
  const secrets: string[] = [];
  for (const [name, value] of [
    [WEBHOOK_SECRET_ENV, current],
    [WEBHOOK_SECRET_PREVIOUS_ENV, previous],
  ] as const) {
    if (value === '') continue;
    const problem = secretProblem(value);
    if (problem) throw new ReceiverSecretError(`${name} ${problem}`);
    if (!secrets.includes(value)) secrets.push(value);
  }
  return secrets;
}
