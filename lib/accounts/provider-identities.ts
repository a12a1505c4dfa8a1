// The keys of a sign-in provider's identity (docs/ACCOUNTS.md "Sign in with another provider"): its claim,
// and the account's row for it. Free of the sign-in's imports, so the account-lifecycle worker can release
// a deleted account's identities without bundling the password hasher.

/** The identity's claim: one identity, one account. */
export const identityKey = (provider: string, subject: string) => ({
  pk: `identity#${provider}#${subject}`,
  sk: 'identity',
});
/** The account's own row for it (one identity per provider), listed from the account's partition. */
export const linkKey = (accountId: string, provider: string) => ({
  pk: `account#${accountId}`,
  sk: `identity#${provider}`,
});
