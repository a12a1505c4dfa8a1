// The suite's secret scan (test/support/secret-scan.ts) knows recovery codes: shown by the response that
// issues them and nowhere else, in any case and with or without the hyphen; stored digests and other
// account internals never appear.
import { describe, expect, it } from 'vitest';
import { type ScanRecord, scanRecords } from '#test/support/secret-scan.ts';

const FILE = 'test/x.test.ts';
const CODES = ['abcde-fgh23', 'qrstu-vwxy7'];

function response(route: string, status: number, data: unknown): ScanRecord {
  return {
    t: 'response',
    file: FILE,
    group: 'accounts',
    route,
    status,
    body: JSON.stringify({ code: status < 300 ? 0 : status, message: 'ok', data }),
  };
}
const logLine = (fields: Record<string, unknown>): ScanRecord => ({
  t: 'log',
  file: FILE,
  line: JSON.stringify({ level: 'info', time: '2026-11-21T08:00:00.123Z', ...fields }),
});
const rules = (records: ScanRecord[]) => scanRecords(records).map((hit) => `${hit.rule} @ ${hit.where}`);

describe('secret scan: recovery codes', () => {
  const issued = response('POST /auth/totp/enable', 200, { totp_enabled: true, recovery_codes: CODES });

  it('allows the codes in the response that issues them, and in no other', () => {
    expect(rules([issued])).toEqual([]);
    expect(rules([issued, response('GET /auth/security', 200, { note: `left: ${CODES[0]}` })])).toEqual([
      'recovery code @ GET /auth/security -> 200',
    ]);
    const regenerated = response('POST /api/v1/auth/totp/recovery-codes', 200, {
      recovery_codes: [CODES[1]],
    });
    expect(rules([regenerated, response('POST /auth/totp/verify', 401, { code: 'QRSTUVWXY7' })])).toEqual([
      'recovery code @ POST /auth/totp/verify -> 401',
    ]);
  });

  it('finds a code in a log line, upper-case or without the hyphen', () => {
    expect(rules([issued, logLine({ message: 'verify', input: 'ABCDEFGH23' })])).toEqual([
      'recovery code @ log',
    ]);
    expect(rules([issued, logLine({ message: 'verify', input: 'Abcde-Fgh23' })])).toEqual([
      'recovery code @ log',
    ]);
  });

  it('finds stored digests written out, and account internals in any response', () => {
    const digest = 'A'.repeat(43);
    expect(rules([logLine({ message: 'x', recovery_code_digests: [digest] })])).toEqual([
      'recovery code digests @ log',
    ]);
    expect(rules([response('GET /auth/me', 200, { id: 'a', totp_secret_enc: 'sealed' })])).toEqual([
      'account internals @ GET /auth/me -> 200',
    ]);
  });
});
