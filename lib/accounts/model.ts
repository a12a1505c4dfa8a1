// The account record's plain shape and the principal a request acts as; no imports.

export type Role = 'user' | 'admin';

export interface Account {
  id: string;
  username: string;
  email: string | null;
  email_verified: boolean;
  role: Role;
  password_hash: string;
  status: 'active' | 'disabled';
  /** Bumped to end every session of the account at once (password change or reset). */
  session_epoch: number;
  totp_enabled: boolean;
  /** TOTP secrets, sealed with the master key. */
  totp_secret_enc?: string;
  totp_pending_enc?: string;
  /** The last TOTP time step accepted: a step is never accepted twice (replay guard). */
  totp_last_step?: number;
  /** Peppered HMACs of the unused recovery codes (a DynamoDB string set; absent when none are left). */
  recovery_code_digests?: Set<string>;
  /** Bumped by a password reset: API tokens stamped with an older epoch stop working. */
  token_epoch?: number;
  /** Bumped by a password reset and by disabling: device tokens of an older epoch stop working. */
  device_epoch?: number;
  /** How many passkeys the account holds (lib/accounts/passkey-store.ts keeps it with them). */
  passkey_count?: number;
  /** An account a sign-in provider created: its first, random hash; a password is set once this differs. */
  unusable_hash?: string;
  /** How many sign-in providers are linked (lib/accounts/provider-sign-in.ts keeps it with them). */
  identity_count?: number;
  /** Set once the account's identifier claims carry the back-office search index. */
  ident_indexed?: boolean;
  /** When the owner's deletion falls due (ISO 8601 UTC); any login before then cancels it. */
  deletion_scheduled_for?: string;
  created_at: string;
  updated_at: string;
}

/** Who is calling, once authentication has run. */
export interface Principal {
  accountId: string;
  role: Role;
  via: 'session' | 'api_token' | 'static_token';
  /** Session id (jti) when `via` is session; token id when `via` is api_token. */
  credentialId?: string;
  /** The account record as read while authenticating, so routes need not read it again. */
  account?: Account;
  /** The static upload token's own storage quota (`upload.api_token_quota_bytes`), whatever the role. */
  quotaBytes?: number;
}
