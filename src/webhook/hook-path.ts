/** Where the receiver takes calls: `POST /hooks/<secret>`, or `POST /hooks` (or below it) with the secret in a header. */
export const HOOKS_PATH = '/hooks';

/** The path of a webhook call, read from a request URL. */
export type HookPath =
  /** `/hooks` (or `/hooks/`): the secret, if any, comes in a header. */
  | { kind: 'bare' }
  /** `/hooks/<segment>`: the segment is the secret the call offers (or a name, when a header carries the secret). */
  | { kind: 'segment'; segment: string }
  /** Anything else. */
  | { kind: 'other' };

/**
 * Reads the path of a request URL (the query is ignored). A segment is compared as sent, not percent-decoded:
 * receiver secrets are made of characters a URL never encodes, so the service sends them as they are.
 *
 * @example parseHookPath('/hooks/abc?x=1') // { kind: 'segment', segment: 'abc' }
 */
export function parseHookPath(url: string | undefined): HookPath {
  const path = (url ?? '').split('?', 1)[0]!;
  if (path === HOOKS_PATH || path === `${HOOKS_PATH}/`) return { kind: 'bare' };
  if (!path.startsWith(`${HOOKS_PATH}/`)) return { kind: 'other' };
  const segment = path.slice(HOOKS_PATH.length + 1);
  return segment.includes('/') ? { kind: 'other' } : { kind: 'segment', segment };
}

/**
 * A request URL fit for a log line: what follows `/hooks/` is replaced, whether it is the right secret, an old
 * one or a stranger's guess, and so is the query (a secret sent in the wrong place stays unwritten too).
 *
 * @example redactHookUrl('/hooks/3f9c…?a=b') // '/hooks/[REDACTED]?[REDACTED]'
 */
export function redactHookUrl(url: string | undefined): string {
  const text = url ?? '';
  const query = text.indexOf('?');
  const path = query < 0 ? text : text.slice(0, query);
  // A path of another shape may be an address registered wrongly, with the secret elsewhere: it is not shown.
  const kind = parseHookPath(path).kind;
  const shown =
    kind === 'bare' || path === '/health' || path === '/' || path === ''
      ? path
      : path.startsWith(`${HOOKS_PATH}/`)
        ? `${HOOKS_PATH}/[REDACTED]`
        : '[REDACTED]';
  return query < 0 ? shown : `${shown}?[REDACTED]`;
}
