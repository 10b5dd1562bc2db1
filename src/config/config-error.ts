/** A configuration problem; its message names the file, the key and what is wrong. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly file: string,
    readonly key: string,
    readonly problem: string,
  ) {
    super(`${file}: ${key ? `${key}: ` : ''}${problem}`);
  }
}
