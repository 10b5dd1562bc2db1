import { KindedError } from '../plan/error-kind.js';

/** A configuration problem; its message names the file, the key and what is wrong. */
export class ConfigError extends KindedError {
  override readonly name = 'ConfigError';
  readonly kind = 'config';
  constructor(
    readonly file: string,
    readonly key: string,
    readonly problem: string,
  ) {
    super(`${file}: ${key ? `${key}: ` : ''}${problem}`);
  }
}
