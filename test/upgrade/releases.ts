/**
 * The releases of loyalty-etl so far, each with the commit it was cut from (docs/releasing.md): what the upgrade
 * tests build from the repository's history, and whose migrations must never change.
 */
export const RELEASES: ReadonlyArray<{ version: string; commit: string }> = [
  { version: '0.1.0', commit: 'ce48b4d7ada57827bc74a8179a34bdc8a1b9ed39' },
  { version: '0.2.0', commit: 'e2d3ea56bdf96270306f5e3ab244c1c140cff5e5' },
  { version: '0.3.0', commit: '8fb0680e7a57a205fd2804b6cfbbb08c77234903' },
  { version: '0.4.0', commit: 'bb91ac3ad15d01c5a1ac2db35e5a88716b10b8a6' },
];

/** The release before this one: the one a user upgrades from. */
export const PREVIOUS_RELEASE = RELEASES[RELEASES.length - 1]!;
