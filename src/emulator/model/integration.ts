import { createHash } from 'node:crypto';

/**
 * The one integration the emulated business has, as returned for any token, created at `created` (the spec's
 * month-name style). Its secrets are derived from the token, so a test can tell them in any output it searches.
 */
export function integrationFor(token: string, created: string): Record<string, unknown> {
  const secret = (name: string) =>
    `${name}-${createHash('sha256').update(`${name}:${token}`).digest('hex').slice(0, 24)}`;
  return {
    id: 42,
    title: 'Online shop',
    exampleURL: 'https://shop.example.com/products/espresso',
    shopDomain: 'shop.example.com',
    apiKey: secret('apikey'),
    password: secret('password'),
    sharedSecret: secret('sharedsecret'),
    integrationToken: token,
    created,
    onlineAPIClientDTO: {
      id: 7,
      progId: 3,
      title: 'Online shop client',
      siteId: 11,
      source: 'shopify',
      apiToken: secret('apitoken'),
      retired: false,
      created,
      createdBy: 1,
    },
  };
}
