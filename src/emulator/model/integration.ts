const CREATED = 'Mar 4, 2021 3:07:12 PM';

/** The one integration the emulated business has, as returned for any token (secrets masked). */
export function integrationFor(token: string): Record<string, unknown> {
  return {
    id: 42,
    title: 'Online shop',
    exampleURL: 'https://shop.example.com/products/espresso',
    shopDomain: 'shop.example.com',
    apiKey: '********',
    password: '********',
    sharedSecret: '********',
    integrationToken: token,
    created: CREATED,
    onlineAPIClientDTO: {
      id: 7,
      progId: 3,
      title: 'Online shop client',
      siteId: 11,
      source: 'shopify',
      apiToken: '********',
      retired: false,
      created: CREATED,
      createdBy: 1,
    },
  };
}
