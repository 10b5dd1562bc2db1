import { KindedError } from '../plan/error-kind.js';

/** The errors of webhook/, in one place. */

/** The body could not be stored: it is not a loyalty webhook body. */
export class InvalidEventError extends Error {
  override readonly name = 'InvalidEventError';
}

/** A gate option that cannot be used; `option` names it the way the command line does. */
export class WebhookGateOptionError extends Error {
  override readonly name = 'WebhookGateOptionError';
  constructor(
    readonly option: string,
    readonly problem: string,
  ) {
    super(`${option}: ${problem}`);
  }
}

/** A receiver secret that is missing where one is needed, or too weak to use. The message never holds its value. */
export class ReceiverSecretError extends Error {
  override readonly name = 'ReceiverSecretError';
}

/** A spool file that does not hold a spooled event (damaged, or written by something else). */
export class UnreadableSpoolFileError extends Error {
  override readonly name = 'UnreadableSpoolFileError';
}

/**
 * The spool's folder cannot be used (it cannot be made, read or written: a permission, a file in its place, a
 * read-only disk): a mistake of the setting (`destination.event_spool`), said in one line.
 */
export class SpoolFolderError extends KindedError {
  override readonly name = 'SpoolFolderError';
  readonly kind = 'config';
}
