// Without Java, `npm start` says exactly what to install instead of failing with a stack trace.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('npm start without Java', () => {
  it('stops with the install command for Java 17', { timeout: 60_000 }, () => {
    const bin = mkdtempSync(join(tmpdir(), 'no-java-'));
    try {
      symlinkSync(process.execPath, join(bin, 'node'));
      const run = spawnSync(join(bin, 'node'), ['--import', 'tsx', 'scripts/start.ts'], {
        env: { ...process.env, PATH: bin, DATA_DIR: join(bin, 'data') },
        encoding: 'utf8',
        timeout: 45_000,
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('DynamoDB Local needs Java 17 or newer');
      expect(run.stderr).toContain('sudo apt-get install -y openjdk-17-jre-headless');
      expect(run.stderr).not.toMatch(/\n\s+at /);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
