/**
 * What one record read means, per stream, for the summaries: an accounts record is one version of a customer,
 * not a customer; a state stream reads one answer per customer asked.
 */
export const READ_AS: ReadonlyMap<string, string> = new Map([
  ['accounts', 'account versions'],
  ['surveys', 'survey responses'],
  ['loyalty_postings', 'postings'],
  ['loyalty_status', 'customer loyalty states'],
  ['vouchers', 'customer voucher lists'],
]);

/** What a row loaded is, where it is not what was read: a customer's voucher list loads its vouchers. */
const LOADED_AS: ReadonlyMap<string, string> = new Map([['vouchers', 'vouchers']]);

/** What a stream's records read are called. */
export function readAs(stream: string): string {
  return READ_AS.get(stream) ?? 'records';
}

/** What a stream's rows loaded are called, when not what it read; undefined when they are. */
export function loadedAs(stream: string): string | undefined {
  return LOADED_AS.get(stream);
}
