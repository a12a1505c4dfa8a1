// The capture that feeds the suite's secret scan (test/support/setup-env.ts) sees every log line of this
// very file, whatever level and sink a test sets.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { configureLogging, log, tapLogging } from '#lib/platform/log.ts';
import { captureFileName, SCAN_FOLDER } from '#test/support/secret-scan.ts';

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
});
