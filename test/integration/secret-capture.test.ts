// The capture that feeds the suite's secret scan (test/support/setup-env.ts) sees every log line of this
// very file, whatever level and sink a test sets.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { configureLogging, log, tapLogging } from '#lib/platform/log.ts';
import { authHarness } from '#test/support/accounts.ts';
import { captureFileName, SCAN_FOLDER, type ScanRecord, scanRecords } from '#test/support/secret-scan.ts';
import { provisionTestStack } from '#test/support/stack.ts';

describe('the capture feeding the scan', () => {
  const captured = () =>
    readFileSync(
      join(inject('scratchDir'), SCAN_FOLDER, captureFileName(expect.getState().testPath ?? '')),
      'utf8',
    );

  it("records this file's log lines at every level, whatever level and sink a test sets", () => {
    // Prepare: a test that silences the log, then one that installs a sink of its own.
    const own: string[] = [];
    configureLogging({ level: 'silent' });
    log.debug('scan-probe-silent', { n: 1 });
    configureLogging({ level: 'info', sink: (line) => own.push(line) });

    // Act
    log.info('scan-probe-own-sink', { n: 2 });
    configureLogging({ level: 'silent' });

    // Assess
    expect(own).toHaveLength(1);
    expect(captured()).toContain('scan-probe-silent');
    expect(captured()).toContain('scan-probe-own-sink');
  });

  it('hands lines to a second tap that chains to the first', () => {
    const mine: string[] = [];
    const previous = tapLogging((line) => {
      mine.push(line);
      previous?.(line);
    });
    try {
      log.warn('scan-probe-chained');
    } finally {
      tapLogging(previous);
    }
    expect(mine.join('\n')).toContain('scan-probe-chained');
    expect(captured()).toContain('scan-probe-chained');
  });

  it('records the device token a login issues and the reset token a reset submits, and the scan knows them', async () => {
    // Prepare
    await provisionTestStack();
    const h = authHarness();
    const user = await h.registerUser();
    await h.call('POST', '/auth/password/reset/code', { email: user.email });
    const token = /#\/reset\?token=([A-Za-z0-9_-]{43})/.exec(h.mail.to(user.email).at(-1)!.text ?? '')![1]!;

    // Act
    const reset = await h.call('POST', '/auth/password/reset', { token, new_password: 'reset-pw-123' });

    // Assess
    expect(reset.status).toBe(200);
    const records = captured()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as ScanRecord);
    const issued = records.find(
      (record) =>
        record.t === 'response' &&
        record.route === 'POST /auth/login' &&
        record.body.includes(user.deviceToken),
    );
    expect(issued).toBeDefined();
    const used = records.find(
      (record) => record.t === 'response' && record.route === 'POST /auth/password/reset',
    );
    expect(used).toMatchObject({ submitted: [{ kind: 'key', value: token }, { kind: 'password' }] });
    // Clean as captured; the same tokens planted in a log line (not logged for real: the run's scan would
    // fail) are found.
    expect(scanRecords(records)).toEqual([]);
    const file = issued!.file;
    const planted: ScanRecord[] = [
      { t: 'log', file, line: JSON.stringify({ message: 'x', leaked: user.deviceToken }) },
      { t: 'log', file, line: JSON.stringify({ message: 'y', leaked: token }) },
      { t: 'log', file, line: JSON.stringify({ message: 'mail', text: `/#/reset?token=${token}` }) },
    ];
    const rules = scanRecords([...records, ...planted]).map((found) => found.rule);
    expect(new Set(rules)).toEqual(new Set(['device token', 'submitted key echoed', 'reset link']));
  });
});
