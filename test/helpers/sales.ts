/**
 * A sale of `paid` with consistent totals (one item, no tax, discount or extras), for the emulator's write
 * endpoints: the customer's identity block under `identityKey` (`account` for a store transaction, `customer`
 * for a purchase or rollback), opened and closed at `time` (`YYYY-MM-DD HH:MM:SS`).
 */
export function saleBody(
  identity: Record<string, unknown>,
  paid: number,
  receipt: string,
  options: { identityKey?: 'account' | 'customer'; time?: string; payments?: unknown[] } = {},
) {
  const time = options.time ?? '2024-03-21 09:58:00';
  return {
    [options.identityKey ?? 'account']: identity,
    receipt,
    openTime: time,
    closeTime: time,
    billed: paid,
    paid,
    redeemed: 0,
    billDiscount: 0,
    itemDiscountTotal: 0,
    billTax: 0,
    itemTaxTotal: 0,
    items: [{ sku: 'X', qty: 1, unitPrice: paid }],
    payments: options.payments ?? [],
    extras: [],
  };
}
