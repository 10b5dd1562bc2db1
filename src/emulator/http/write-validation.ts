import { parseDay } from '../model/calendar.js';
import { SourceError } from './responses.js';

/** A parsed JSON request body. */
export type Body = Record<string, unknown>;

/**
 * The type a member must have: the spec's String, Decimal, Boolean, its two date shapes, String-or-null, or
 * a map of names to String-or-null (`businessFields`).
 */
export type Shape = 'string' | 'number' | 'boolean' | 'time' | 'day' | 'nullableString' | 'textMap';

/** A member of a body: its shape (a leaf, a nested object or a list of objects) and whether it is required. */
export type Field =
  | { kind: 'leaf'; shape: Shape; required: boolean }
  | { kind: 'object'; members: Members; required: boolean }
  | { kind: 'list'; members: Members; required: boolean; nonEmpty: boolean };

export type Members = Record<string, Field>;

/** Helpers that read like the spec's tables. */
export const optional = (shape: Shape): Field => ({ kind: 'leaf', shape, required: false });
export const required = (shape: Shape): Field => ({ kind: 'leaf', shape, required: true });
export const object = (members: Members, isRequired = false): Field => ({
  kind: 'object',
  members,
  required: isRequired,
});
/** A list of objects; a required list must not be empty unless `nonEmpty` is false (payments, extras). */
export const list = (members: Members, isRequired = false, nonEmpty = isRequired): Field => ({
  kind: 'list',
  members,
  required: isRequired,
  nonEmpty,
});

const SOURCE_TIME = /^(\d{4}-\d{2}-\d{2}) ([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/;
/** Half a cent, and a hair more for binary fractions: totals agree "to the cent". */
const CENT = 0.005 + 1e-9;

/** Value at a dotted path (`account.phone`), or undefined. */
export function valueAt(body: unknown, path: string): unknown {
  let value: unknown = body;
  for (const key of path.split('.')) value = isObject(value) ? value[key] : undefined;
  return value;
}

export function isObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

function hasShape(value: unknown, shape: Shape): boolean {
  switch (shape) {
    case 'string':
      return typeof value === 'string';
    case 'nullableString':
      return value === null || typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'time': {
      const match = typeof value === 'string' ? SOURCE_TIME.exec(value) : null;
      return match !== null && parseDay(match[1]!) !== null;
    }
    case 'day':
      return typeof value === 'string' && parseDay(value) !== null;
    case 'textMap':
      return isObject(value) && Object.values(value).every((v) => v === null || typeof v === 'string');
  }
}

/**
 * Checks `body` against `members`: first every required member that is missing or empty (1002, all of them
 * named), then every present member of the wrong type (1006, all of them named). Paths name list elements
 * by position, e.g. `items[1].qty`.
 */
export function checkBody(body: Body, members: Members): void {
  const empty: string[] = [];
  const invalid: string[] = [];
  walk(body, members, '', empty, invalid);
  if (empty.length > 0) throw SourceError.fieldsEmpty(empty.join(', '));
  if (invalid.length > 0) throw SourceError.invalidFields(invalid.join(', '));
}

function walk(value: Body, members: Members, prefix: string, empty: string[], invalid: string[]): void {
  for (const [name, field] of Object.entries(members)) {
    const path = prefix + name;
    const member = value[name];
    if (field.kind === 'leaf') {
      // A nullable member may be null; otherwise null and "" count as empty.
      const missing = field.shape === 'nullableString' ? member === undefined : isEmpty(member);
      if (missing) {
        if (field.required) empty.push(path);
      } else if (!hasShape(member, field.shape)) {
        invalid.push(path);
      }
      continue;
    }
    if (member === undefined || member === null) {
      if (field.required) empty.push(path);
      continue;
    }
    if (field.kind === 'object') {
      if (isObject(member)) walk(member, field.members, `${path}.`, empty, invalid);
      else invalid.push(path);
      continue;
    }
    if (!Array.isArray(member)) {
      invalid.push(path);
      continue;
    }
    if (member.length === 0 && field.required && field.nonEmpty) empty.push(path);
    member.forEach((element, i) => {
      if (isObject(element)) walk(element, field.members, `${path}[${i}].`, empty, invalid);
      else invalid.push(`${path}[${i}]`);
    });
  }
}

/** The customer identity block (transaction `account`, rollback and purchase `customer`, appointment `account`). */
export const IDENTITY: Members = {
  accountId: optional('string'),
  phone: optional('string'),
  email: optional('string'),
  first: optional('string'),
  last: optional('string'),
  country: optional('string'),
  state: optional('string'),
  city: optional('string'),
};

const KEY_VALUE: Members = { key: optional('string'), value: optional('string') };

/**
 * The transaction body shared by submit (6), rollback (7) and purchase (14), with the identity block under
 * `identity`. `voucher.*` and `loyalty.*` are typed but not required: the spec marks them required yet does
 * not say where they go, and its samples carry the same facts as payment entries.
 */
export function transactionMembers(identity: 'account' | 'customer'): Members {
  return {
    [identity]: object(IDENTITY),
    receipt: required('string'),
    openTime: required('time'),
    closeTime: required('time'),
    operatorId: optional('string'),
    operatorName: optional('string'),
    deviceId: optional('string'),
    deviceName: optional('string'),
    billed: required('number'),
    paid: required('number'),
    redeemed: required('number'),
    billDiscount: required('number'),
    itemDiscountTotal: required('number'),
    billTax: required('number'),
    itemTaxTotal: required('number'),
    customProperties: list(KEY_VALUE),
    items: list(
      {
        sku: required('string'),
        qty: required('number'),
        unitPrice: required('number'),
        name: optional('string'),
        description: optional('string'),
        type: optional('string'),
        unit: optional('string'),
        tax: optional('number'),
        currency: optional('string'),
        customProperties: list(KEY_VALUE),
        discount: object({
          name: optional('string'),
          description: optional('string'),
          amount: optional('number'),
          groupId: optional('string'),
          groupName: optional('string'),
          type: optional('string'),
          reason: optional('string'),
          authorizedBy: optional('string'),
        }),
      },
      true,
    ),
    payments: list(
      {
        name: optional('string'),
        typeName: optional('string'),
        amount: optional('number'),
        referenceId: optional('string'),
        date: optional('time'),
        redemption: optional('boolean'),
        voucher: optional('boolean'),
      },
      true,
      false,
    ),
    extras: list({ name: optional('string'), amount: optional('number') }, true, false),
    voucher: object({
      name: optional('boolean'),
      typeName: optional('string'),
      referenceId: optional('string'),
      amount: optional('number'),
      redemption: optional('boolean'),
      voucher: optional('boolean'),
    }),
    loyalty: object({
      name: optional('boolean'),
      typeName: optional('string'),
      amount: optional('number'),
      redemption: optional('boolean'),
      voucher: optional('boolean'),
    }),
  };
}

/** The `ecommerce` block of a purchase or page view (every member a String; `time` required). */
export const ECOMMERCE: Field = object(
  {
    userAgent: optional('string'),
    browserIdentifier: optional('string'),
    time: required('string'),
    sourceUrl: optional('string'),
    ip: optional('string'),
    custom: object({ fbp: optional('string'), fbc: optional('string') }),
  },
  true,
);

/**
 * Checks a transaction (submit, rollback, purchase) already shaped by {@link transactionMembers}: a payment
 * marked `voucher` needs its `referenceId` (1002), and the spec's four totals rules hold to the cent (1006
 * naming every total that does not add up).
 */
export function checkTransactionRules(body: Body): void {
  const payments = body.payments as Body[];
  const missingReference = payments.flatMap((p, i) =>
    p.voucher === true && isEmpty(p.referenceId) ? [`payments[${i}].referenceId`] : [],
  );
  if (missingReference.length > 0) throw SourceError.fieldsEmpty(missingReference.join(', '));
  const wrong = totalsThatDoNotAddUp(body);
  if (wrong.length > 0) throw SourceError.invalidFields(wrong.join(', '));
}

/** The totals of a transaction that break the spec's rules, in the spec's order. */
export function totalsThatDoNotAddUp(body: Body): string[] {
  const items = body.items as Body[];
  const num = (value: unknown): number => (typeof value === 'number' ? value : 0);
  const sum = (rows: Body[], f: (row: Body) => number): number => rows.reduce((total, row) => total + f(row), 0);
  const expected: Array<[string, number]> = [
    ['itemTaxTotal', sum(items, (i) => num(i.tax) * num(i.qty))],
    ['itemDiscountTotal', sum(items, (i) => num(valueAt(i, 'discount.amount')) * num(i.qty))],
    [
      'billed',
      sum(items, (i) => num(i.unitPrice) * num(i.qty)) +
        sum(body.extras as Body[], (e) => num(e.amount)) +
        num(body.billTax) +
        num(body.itemTaxTotal),
    ],
    ['paid', num(body.billed) - num(body.billDiscount) - num(body.itemDiscountTotal) - num(body.redeemed)],
  ];
  return expected.filter(([name, value]) => Math.abs(num(body[name]) - value) > CENT).map(([name]) => name);
}
