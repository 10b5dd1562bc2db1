import { dayParam, dayRangeParams, instantParam } from '../query-params.js';
import type { EmulatorRequest } from '../request-pipeline.js';
import { json, ndjson } from '../responses.js';
import type { Route } from '../router.js';
import type { RouteContext } from './route-context.js';

/**
 * The emulator's own endpoints under `/_emulator/`: the ground truth as NDJSON (streamed while
 * generated; the loyalty state and vouchers as of `asOf`, default now), request statistics, and the resolved options with the faults in force (without the auth secret).
 */
export function truthRoutes({ data, truth, stats, faults, now }: RouteContext): Route[] {
  /** Rows as of `asOf` (an ISO instant or epoch milliseconds), by default the emulator's clock. */
  const asOf = (rows: (asOfMs: number) => Iterable<unknown>) => (request: EmulatorRequest) =>
    ndjson(rows(instantParam(request.query, 'asOf') ?? now()));
  const ranged = (rows: (start: string, end: string) => Iterable<unknown>) => (request: EmulatorRequest) => {
    const { start, end } = dayRangeParams(request.query);
    return ndjson(rows(start, end));
  };
  return [
    { method: 'GET', path: '/_emulator/truth/accounts', handle: ranged(truth.accounts) },
    { method: 'GET', path: '/_emulator/truth/survey-responses', handle: ranged(truth.surveyResponses) },
    { method: 'GET', path: '/_emulator/truth/postings', handle: ranged(truth.postings) },
    {
      method: 'GET',
      path: '/_emulator/truth/rejects-accounts',
      handle: ranged((s, e) => truth.rejects('accounts', s, e)),
    },
    {
      method: 'GET',
      path: '/_emulator/truth/rejects-surveys',
      handle: ranged((s, e) => truth.rejects('surveys', s, e)),
    },
    {
      method: 'GET',
      path: '/_emulator/truth/field-rejects-accounts',
      handle: ranged((s, e) => truth.fieldRejects('accounts', s, e)),
    },
    {
      method: 'GET',
      path: '/_emulator/truth/field-rejects-surveys',
      handle: ranged((s, e) => truth.fieldRejects('surveys', s, e)),
    },
    {
      method: 'GET',
      path: '/_emulator/truth/customers',
      handle: (request) => ndjson(truth.customers(dayParam(request.query, 'through'))),
    },
    {
      method: 'GET',
      path: '/_emulator/truth/loyalty-status',
      handle: asOf(function* (ms) {
        for (const { wallets: _, balance_details: __, ...status } of truth.loyaltyStatus(ms)) yield status;
      }),
    },
    { method: 'GET', path: '/_emulator/truth/loyalty-wallets', handle: asOf(truth.loyaltyWallets) },
    { method: 'GET', path: '/_emulator/truth/loyalty-balance-details', handle: asOf(truth.loyaltyBalanceDetails) },
    { method: 'GET', path: '/_emulator/truth/vouchers', handle: asOf(truth.vouchers) },
    { method: 'GET', path: '/_emulator/truth/surveys', handle: () => json(200, truth.surveys()) },
    {
      method: 'GET',
      path: '/_emulator/stats',
      handle: () => json(200, { requests: stats.requests(), byPath: stats.snapshot() }),
    },
    {
      method: 'GET',
      path: '/_emulator/info',
      handle: () => {
        const { auth, ...options } = data.options;
        return json(200, { ...options, faults: faults(), auth: auth ? { header: auth.header } : null });
      },
    },
  ];
}
