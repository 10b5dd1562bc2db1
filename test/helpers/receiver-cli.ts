import { startCli } from './cli.js';

/** Starts `loyalty-etl webhook` and waits for the address it listens on. */
export async function startReceiverCli(args: string[], env: Record<string, string | undefined>) {
  const cli = startCli(['webhook', '--port', '0', ...args], {
    LOYALTY_WEBHOOK_SECRET: undefined,
    LOYALTY_WEBHOOK_SECRET_PREVIOUS: undefined,
    LOYALTY_LOG_LEVEL: 'debug',
    ...env,
  });
  const url = await new Promise<string>((resolve, reject) => {
    const look = () => {
      const found = /listening on (http:\/\/[^\s:]+:\d+)/.exec(cli.output());
      if (found) resolve(found[1]!);
    };
    cli.child.stdout!.on('data', look);
    cli.child.on('close', () => reject(new Error(`webhook receiver ended: ${cli.output().slice(-800)}`)));
  });
  return { ...cli, url };
}
