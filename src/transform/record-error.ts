/** A source record that cannot be loaded; it goes to `_etl_rejects` with this message. */
export class RecordError extends Error {
  override readonly name = 'RecordError';
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(field ? `${field}: ${problem}` : problem);
  }
}
