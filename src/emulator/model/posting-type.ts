/** Posting `type` codes (meaning not given by the source; these are the emulator's). */
export const POSTING_TYPE = { purchase: 1, redemption: 2, bonus: 3, rollback: 4 } as const;
