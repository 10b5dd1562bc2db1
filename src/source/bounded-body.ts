/** The largest answer read when `source.max_response_bytes` says nothing: 16 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/** An answer larger than the cap: the body was not read past it. */
export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
  constructor(readonly maxBytes: number) {
    super(
      `the answer is larger than ${maxBytes} bytes (source.max_response_bytes); it was not read further. A smaller source.page_size asks for less per page; raise the cap only for a service whose pages are that large`,
    );
  }
}

/**
 * The body of `response` as text, read chunk by chunk and given up as soon as it passes `maxBytes` (decoded bytes,
 * what memory holds), so that one runaway answer cannot take the process's memory. A `Content-Length` above the cap
 * stops it before any byte is read.
 *
 * @throws ResponseTooLargeError past the cap; the connection is let go.
 */
export async function readBoundedText(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  const encoded = (response.headers.get('content-encoding') ?? 'identity') !== 'identity';
  if (!encoded && Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new ResponseTooLargeError(maxBytes);
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ResponseTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
