import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe } from 'node:diagnostics_channel';

/** A request on its way out: what `fetch` was asked for, and whom to tell when it is written. */
interface Departure {
  method: string;
  /** Path and query, as the request line carries them. */
  path: string;
  onDeparture: () => void;
}

/** The part of undici's request (as its diagnostics channels publish it) read here. */
interface PublishedRequest {
  method?: unknown;
  path?: unknown;
}

const sending = new AsyncLocalStorage<Departure>();
const departures = new WeakMap<object, Departure>();
let listening = false;

/**
 * Node's `fetch` (undici) publishes each request it creates, and again the moment it writes the request's headers to
 * a connection. A request is created in the async context of the `fetch` call that made it, which is how it is
 * matched to its caller; the write may come much later, once a connection is open (and the process free to open it).
 */
function listen(): void {
  if (listening) return;
  listening = true;
  subscribe('undici:request:create', (message) => {
    const departure = sending.getStore();
    const request = (message as { request?: PublishedRequest }).request;
    if (!departure || !request) return;
    // Only the request this `fetch` asked for: anything else created in its context is not this caller's.
    if (request.method === departure.method && request.path === departure.path) departures.set(request, departure);
  });
  subscribe('undici:client:sendHeaders', (message) => {
    const request = (message as { request?: object }).request;
    if (request) departures.get(request)?.onDeparture();
  });
}

/**
 * Runs `send` (a `fetch` of `method` `url`) and calls `onDeparture` when the request is written to its connection:
 * not when `fetch` is called, since opening a connection (and a busy process) can hold a request back for hundreds
 * of milliseconds first. Where the write cannot be observed, `onDeparture` is never called.
 *
 * @example
 * const response = await withDeparture('GET', url, () => slot.sent(), () => fetch(url));
 */
export function withDeparture<T>(
  method: string,
  url: URL,
  onDeparture: () => void,
  send: () => Promise<T>,
): Promise<T> {
  listen();
  return sending.run({ method, path: `${url.pathname}${url.search}`, onDeparture }, send);
}
