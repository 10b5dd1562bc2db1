import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, type LogFormat } from '../../src/log/logger.js';
import { registerSecret } from '../../src/log/redact.js';

const SECRET = 'tok-81c2f0e9d7a4-secret';

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d) => (text += d));
  return { stream, text: () => text };
}

describe('log lines', () => {
  it.each<LogFormat>(['json', 'pretty'])('never print a registered secret (%s)', async (format) => {
    registerSecret(SECRET);
    const out = capture();
    const logger = createLogger({ level: 'info', destination: out.stream, format });
    logger.warn(
      { url: `https://x.example/?token=${SECRET}`, err: new Error(`refused ${SECRET}`) },
      `calling with ${SECRET}`,
    );
    await new Promise((r) => setImmediate(r));
    expect(out.text()).toContain('[REDACTED]');
    expect(out.text()).not.toContain(SECRET);
  });

  it('are human lines in the pretty format: time, level, message and the fields, in colour only when asked', async () => {
    const plain = capture();
    createLogger({ level: 'info', destination: plain.stream, format: 'pretty' }).info(
      { stream: 'accounts', windows: 3 },
      'window loaded',
    );
    const coloured = capture();
    createLogger({ level: 'info', destination: coloured.stream, format: 'pretty', colour: true }).info(
      { stream: 'accounts' },
      'window loaded',
    );
    await new Promise((r) => setImmediate(r));
    expect(plain.text()).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: window loaded \{"stream":"accounts","windows":3\}\n$/);
    expect(coloured.text()).toContain('\u001b[');
  });
});
