import { KindedError } from '../plan/error-kind.js';

/** Something went wrong talking to the source. `endpoint` names the call, never its credentials. */
export class SourceError extends KindedError {
  override readonly name: string = 'SourceError';
  readonly kind = 'source';
  constructor(
    message: string,
    readonly endpoint: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * Worth trying again: 5xx, 408, 429, time-outs, dropped connections, cut-off or unparsable bodies. Thrown
 * out of the client only once its retries are spent; the message then says how many attempts were made.
 */
export class RetriableSourceError extends SourceError {
  override readonly name = 'RetriableSourceError';
  constructor(
    message: string,
    endpoint: string,
    status?: number,
    /** Seconds the source asked us to wait (`Retry-After`), when it did. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message, endpoint, status);
  }
}

/**
 * The request itself is wrong or refused (4xx other than 408 and 429, a 1xxx error body, a response of the
 * wrong shape): retrying cannot help.
 */
export class FatalSourceError extends SourceError {
  override readonly name: string = 'FatalSourceError';
}

/**
 * The source refused the credentials (HTTP 401 or 403). Every request would be refused alike, so the client sends
 * none after it, and a run stops at once.
 */
export class AuthenticationError extends FatalSourceError {
  override readonly name = 'AuthenticationError';
}

/**
 * The source's `1010` ("at least one of the following fields is required"): for a per-customer call, the service
 * cannot be asked about that customer as the warehouse knows it.
 */
export class FieldsRequiredError extends FatalSourceError {
  override readonly name = 'FieldsRequiredError';
}

/** The source's `1005 Data Not Found`: for postings it means "no postings", not a failure. */
export class DataNotFoundError extends SourceError {
  override readonly name = 'DataNotFoundError';
}

/**
 * A paged listing kept changing while it was read (records skipped or repeated between pages), read after
 * read, so it could not be read completely and without duplicates; the window it belongs to is not loaded.
 */
export class IncompleteListingError extends SourceError {
  override readonly name = 'IncompleteListingError';
}

/** A request of a piece of work that was called off (its window already failed): never retried, never sent. */
export class CancelledRequestError extends SourceError {
  override readonly name = 'CancelledRequestError';
}
