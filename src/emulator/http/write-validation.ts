import { SourceError } from './responses.js';

/** A parsed JSON request body. */
export type Body = Record<string, unknown>;

const SOURCE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const CENT = 0.005;

/** Value at a dotted path (`account.phone`), or undefined. */
export function valueAt(body: unknown, path: string): unknown {
  let value: unknown = body;
  for (const key of path.split('.')) value = typeof value === 'object' && value !== null ? (value as Body)[key] : undefined;
  return value;
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);
}

/** 1002 listing every path whose value is missing or empty. */
export function requireFields(body: unknown, paths: readonly string[]): void {
  const empty = paths.filter((path) => isEmpty(valueAt(body, path)));
  if (empty.length > 0) throw SourceError.fieldsEmpty(empty.join(', '));
}

/** 1006 listing present values that are not of the source's shape. */
export function checkShapes(body: unknown, shapes: Record<string, 'time' | 'day' | 'number'>): void {
  const invalid = Object.entries(shapes)
    .filter(([path, shape]) => {
      const value = valueAt(body, path);
      if (value === undefined || value === null) return false;
      if (shape === 'number') return typeof value !== 'number' || !Number.isFinite(value);
      return typeof value !== 'string' || !(shape === 'time' ? SOURCE_TIME : DAY).test(value);
    })
    .map(([path]) => path);
  if (invalid.length > 0) throw SourceError.invalidFields(invalid.join(', '));
}

const TRANSACTION_FIELDS = ['receipt', 'openTime', 'closeTime', 'billed', 'paid', 'redeemed', 'billDiscount', 'itemDiscountTotal', 'billTax', 'itemTaxTotal', 'items'];
const TRANSACTION_NUMBERS = ['billed', 'paid', 'redeemed', 'billDiscount', 'itemDiscountTotal', 'billTax', 'itemTaxTotal'];

/**
 * Checks a transaction (submit, rollback, purchase): required members (1002), shapes (1006), and the
 * spec's totals rules to the cent (1006 naming the totals that do not add up).
 */
export function checkTransaction(body: Body): void {
  requireFields(body, TRANSACTION_FIELDS);
  if (!Array.isArray(body.payments) || !Array.isArray(body.extras)) throw SourceError.fieldsEmpty('payments, extras');
  checkShapes(body, { openTime: 'time', closeTime: 'time', ...Object.fromEntries(TRANSACTION_NUMBERS.map((n) => [n, 'number' as const])) });
  const items = body.items as Body[];
  for (const item of items) {
    requireFields(item, ['sku', 'qty', 'unitPrice']);
    checkShapes(item, { qty: 'number', unitPrice: 'number', tax: 'number', 'discount.amount': 'number' });
  }
  const sum = (rows: Body[], f: (row: Body) => number): number => rows.reduce((total, row) => total + f(row), 0);
  const num = (value: unknown): number => (typeof value === 'number' ? value : 0);
  const itemTax = sum(items, (i) => num(i.tax) * num(i.qty));
  const itemDiscount = sum(items, (i) => num(valueAt(i, 'discount.amount')) * num(i.qty));
  const extras = sum(body.extras as Body[], (e) => num(e.amount));
  const billed = sum(items, (i) => num(i.unitPrice) * num(i.qty)) + extras + num(body.billTax) + num(body.itemTaxTotal);
  const paid = num(body.billed) - num(body.billDiscount) - num(body.itemDiscountTotal) - num(body.redeemed);
  const wrong = [
    ['itemTaxTotal', num(body.itemTaxTotal), itemTax],
    ['itemDiscountTotal', num(body.itemDiscountTotal), itemDiscount],
    ['billed', num(body.billed), billed],
    ['paid', num(body.paid), paid],
  ].filter(([, given, expected]) => Math.abs((given as number) - (expected as number)) > CENT);
  if (wrong.length > 0) throw SourceError.invalidFields(wrong.map(([name]) => name).join(', '));
}
