// Storage use as the back office shows it beside each account; lib/files provides the reader.

/** Storage use per account, shown in the back-office listing (filled by the usage repository). */
export interface AccountUsage {
  used_bytes: number;
  file_count: number;
  /** null: no quota (administrators). */
  quota_bytes: number | null;
  /** Bytes of the account's files served this month (docs/UPLOADS.md "Bandwidth"). */
  bandwidth_bytes_used: number;
}

/**
 * Where the back office reads each listed account's storage use from (lib/files `usageReader`); the role
 * says whether a quota applies (administrators have none).
 */
export interface AccountUsageReader {
  usageOf(
    accounts: ReadonlyArray<{ id: string; role: 'user' | 'admin' }>,
  ): Promise<Map<string, AccountUsage>>;
}
