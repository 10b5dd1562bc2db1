import { DateTime } from 'luxon';
import type { ProfileEdit } from '../../model/activity-overlay.js';
import { type SaleChannel, pointsWorth, reversalPostings, salePostings } from '../../model/earn-rule.js';
import { loyaltyUpdatedBodyOf } from '../../webhook/loyalty-updated-body.js';
import type { EmulatorRequest } from '../request-pipeline.js';
import { SourceError, json } from '../responses.js';
import type { Route } from '../router.js';
import {
  type Body,
  ECOMMERCE,
  IDENTITY,
  type Members,
  checkBody,
  checkTransactionRules,
  isObject,
  list,
  object,
  optional,
  required,
  transactionMembers,
} from '../write-validation.js';
import type { RouteContext } from './route-context.js';

const SUCCESS = { status: 'success' };

const MODIFY: Members = {
  accountId: optional('string'),
  phone: optional('string'),
  email: optional('string'),
  first: optional('nullableString'),
  last: optional('nullableString'),
  gender: optional('nullableString'),
  birthdate: optional('day'),
  nationality: optional('nullableString'),
  city: optional('nullableString'),
  country: optional('nullableString'),
  language: optional('nullableString'),
  businessFields: optional('textMap'),
};
const EDITABLE = ['first', 'last', 'gender', 'birthdate', 'nationality', 'city', 'country', 'language'] as const;

const APPOINTMENT: Members = {
  account: object(IDENTITY, true),
  referenceNumber: required('string'),
  generated: optional('time'),
  start: required('time'),
  end: required('time'),
  operatorId: optional('string'),
  operatorName: optional('string'),
  deviceId: optional('string'),
  deviceName: optional('string'),
  status: required('number'),
  receipt: optional('string'),
  items: list(
    {
      sku: required('string'),
      name: required('string'),
      price: required('number'),
      duration: required('number'),
      consultantId: optional('string'),
      consultantName: optional('string'),
      consultantType: optional('string'),
    },
    true,
  ),
};

const PAGE_VIEW: Members = {
  customer: object(IDENTITY),
  items: list(
    {
      type: required('string'),
      sku: required('string'),
      qty: required('string'),
      name: required('string'),
      currency: optional('string'),
      unitPrice: optional('string'),
    },
    true,
  ),
  ecommerce: ECOMMERCE,
};

/**
 * Endpoints 4, 6, 7, 8, 14 and 15. A body is checked in this order: required members (1002), types and
 * shapes (1006), the totals rules (1006), then against what was written before (1004, and 1006 for a
 * rollback of an unknown receipt or a redemption beyond the balance). An accepted write is applied to the
 * activity overlay at the emulator's clock; a change of points calls the loyalty webhook.
 */
export function writeRoutes(context: RouteContext): Route[] {
  const writes = new Writes(context);
  const route = (
    method: Route['method'],
    path: string,
    write: (body: Body, query: URLSearchParams) => void,
  ): Route => ({
    method,
    path,
    handle: async (request) => {
      write(await jsonBody(request), request.query);
      return json(200, SUCCESS);
    },
  });
  return [
    route('PUT', '/accounts/update', (body, query) => writes.update(body, query)),
    route('POST', '/accounts/transactions/submit', (body) => writes.storeSale(body)),
    route('POST', '/accounts/transactions/rollback', (body) => writes.rollback(body)),
    route('POST', '/accounts/appointments/submit', (body) => writes.appointment(body)),
    route('POST', '/ecommactivity/purchase', (body) => writes.onlineSale(body)),
    route('POST', '/ecommactivity/pageview', (body) => writes.pageView(body)),
  ];
}

/** The write endpoints' effects on the activity overlay, each after its body's checks. */
class Writes {
  constructor(private readonly context: RouteContext) {}

  private get data() {
    return this.context.data;
  }

  private get activity() {
    return this.context.activity;
  }

  /** Modify Account: the customer is named in the query or the body. */
  update(body: Body, query: URLSearchParams): void {
    const phone = query.get('phone') || (typeof body.phone === 'string' ? body.phone : '');
    const email = query.get('email') || (typeof body.email === 'string' ? body.email : '');
    if (!phone && !email) throw SourceError.atLeastOneRequired('phone, email');
    checkBody(body, MODIFY);
    const customer = this.data.findCustomer(phone || null, email || null);
    if (customer < 0) throw SourceError.dataNotFound();
    // Identifiers find the customer and never change; one that belongs to someone else is a conflict.
    const id = this.data.directory.customerId(customer);
    if (typeof body.accountId === 'string' && body.accountId !== '' && body.accountId !== id)
      throw SourceError.notUnique('accountId');
    const byEmail = email ? this.data.directory.findByEmail(email) : -1;
    if (byEmail >= 0 && byEmail !== customer) throw SourceError.notUnique('email');
    this.activity.modify(customer, profileEdit(body), this.context.now());
  }

  storeSale(body: Body): void {
    checkBody(body, transactionMembers('account'));
    checkTransactionRules(body);
    this.sale(body, 'account', 'store');
  }

  onlineSale(body: Body): void {
    checkBody(body, { ...transactionMembers('customer'), ecommerce: ECOMMERCE });
    checkTransactionRules(body);
    this.sale(body, 'customer', 'online');
  }

  rollback(body: Body): void {
    checkBody(body, transactionMembers('customer'));
    checkTransactionRules(body);
    const { activity } = this;
    const original = activity.sales.get(body.receipt as string);
    if (!original) throw SourceError.invalidFields('receipt');
    if (original.rolledBack) throw SourceError.notUnique('receipt');
    original.rolledBack = true;
    if (original.customer >= 0 && original.booked.length > 0) {
      const history = activity.postingsOf(original.customer);
      activity.book(
        original.customer,
        reversalPostings(history, original.booked, this.instantOf(body.closeTime as string), this.context.now()),
      );
      this.notify(original.customer, 'ROLLBACK');
    }
  }

  appointment(body: Body): void {
    checkBody(body, APPOINTMENT);
    const reference = body.referenceNumber as string;
    const identity = body.account as Body;
    const customer = this.customerOf(identity);
    const owner =
      customer >= 0 ? this.data.directory.customerId(customer) : String(identity.phone || identity.email || '');
    const now = this.context.now();
    const { appointments } = this.activity;
    const existing = appointments.get(reference);
    if (existing && existing.owner !== owner) throw SourceError.notUnique('referenceNumber');
    appointments.set(
      reference,
      existing
        ? { ...existing, body, updatedMs: now, updates: existing.updates + 1 }
        : { referenceNumber: reference, owner, body, createdMs: now, updatedMs: now, updates: 0 },
    );
  }

  pageView(body: Body): void {
    checkBody(body, PAGE_VIEW);
    const wrongType = (body.items as Body[]).flatMap((item, i) =>
      item.type === 'Product' || item.type === 'Service' ? [] : [`items[${i}].type`],
    );
    if (wrongType.length > 0) throw SourceError.invalidFields(wrongType.join(', '));
    this.activity.pageViews++;
  }

  private sale(body: Body, identity: 'account' | 'customer', channel: SaleChannel): void {
    const { activity, context } = this;
    const receipt = body.receipt as string;
    if (activity.sales.has(receipt)) throw SourceError.notUnique('receipt');
    const customer = this.customerOf(body[identity]);
    const redeemed = body.redeemed as number;
    // A redemption debits the home wallet, so it is held against that wallet's points as of now.
    if (
      redeemed > 0 &&
      (customer < 0 || pointsWorth(redeemed) > activity.loyaltyOf(customer, context.now()).wallets[0]!.point)
    ) {
      throw SourceError.invalidFields('redeemed');
    }
    const booked =
      customer < 0
        ? []
        : salePostings(activity.postingsOf(customer), {
            receipt,
            channel,
            paid: body.paid as number,
            redeemed,
            txnMs: this.instantOf(body.closeTime as string),
            postedMs: context.now(),
            deviceName: typeof body.deviceName === 'string' && body.deviceName !== '' ? body.deviceName : null,
          });
    activity.sales.set(receipt, { receipt, channel, customer, booked, rolledBack: false });
    if (booked.length > 0) {
      activity.book(customer, booked);
      this.notify(customer, channel === 'store' ? 'POS' : 'ECOMMERCE');
    }
  }

  /** Customer index named by an identity block (phone first, then e-mail), or -1. */
  private customerOf(identity: unknown): number {
    if (!isObject(identity)) return -1;
    const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
    return this.data.findCustomer(text(identity.phone), text(identity.email));
  }

  /** A source time (`YYYY-MM-DD HH:MM:SS`) as an instant: local time in the business's zone. */
  private instantOf(time: string): number {
    return DateTime.fromFormat(time, 'yyyy-MM-dd HH:mm:ss', { zone: this.data.options.timezone }).toMillis();
  }

  private notify(customer: number, source: string): void {
    const { activity, context } = this;
    context.webhooks.notify(
      loyaltyUpdatedBodyOf(activity.latest(customer), activity.loyaltyOf(customer, context.now()), source),
    );
  }
}

/** The profile members a modify body sets: present ones only; "" and null clear a member. */
function profileEdit(body: Body): ProfileEdit {
  const edit: ProfileEdit = {};
  for (const name of EDITABLE) {
    if (body[name] === undefined) continue;
    edit[name] = body[name] === '' ? null : (body[name] as string | null);
  }
  if (isObject(body.businessFields)) {
    edit.businessFields = Object.fromEntries(
      Object.entries(body.businessFields).map(([k, v]) => [k, v === '' ? null : (v as string | null)]),
    );
  }
  return edit;
}

async function jsonBody(request: EmulatorRequest): Promise<Body> {
  let body: unknown;
  try {
    body = JSON.parse(await request.readBody());
  } catch {
    throw SourceError.badRequest('body must be JSON');
  }
  if (!isObject(body)) throw SourceError.badRequest('body must be a JSON object');
  return body;
}
