// The one-off scripts as a newcomer runs them beside `npm start`: no endpoint, table or port to pass, no
// SDK notice, and one line (not a stack trace) when there is nothing to run against.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '#infra/local/dynamodb-local.ts';
import { startService } from '#test/support/start-process.ts';
import { RUNNING_STACK_FILE } from '../../scripts/running-stack.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'service-scripts-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** A user's shell: the test setup's stand-in endpoints, table, base URL and port are not there. */
function userShell(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || /^(AWS__|TABLE_NAME$|BUCKET_NAME$|BASE_URL$|PORT$|DATA_DIR$)/.test(name))
      continue;
    env[name] = value;
  }
  return { ...env, DATA_DIR: dataDir, APP_CONFIG: 'infra/config/local.json' };
}

function run(script: string, args: string[] = [], extra: Record<string, string> = {}) {
  return spawnSync(process.execPath, ['--import', 'tsx', `scripts/${script}`, ...args], {
    env: { ...userShell(), ...extra },
    encoding: 'utf8',
    timeout: 90_000,
  });
}

describe('the scripts beside npm start', () => {
  it('find the running stack by themselves, and say in one line when none runs', {
    timeout: 240_000,
  }, async () => {
    // A port of its own, as PORT=3000 by default (links the service hands out name it).
    const service = await startService({ ...userShell(), PORT: String(await freePort()) });
    try {
      expect(existsSync(join(dataDir, RUNNING_STACK_FILE))).toBe(true);

      const tour = run('tour.ts');
      expect(tour.stderr).toBe('');
      expect(tour.status).toBe(0);
      expect(tour.stdout).toContain(`Tour of ${service.url}`);
      expect(tour.stdout).toMatch(/POST \/api\/v1\/upload -> 200/);
      // The README's "Pro month": 10 GiB for 30 days, not a permanent plan that grants nothing.
      const paid = /paid: quota 10737418240 bytes until (\S+) \(Pro month/.exec(tour.stdout);
      expect(paid, tour.stdout).not.toBeNull();
      const days = (Date.parse(paid?.[1] ?? '') - Date.now()) / 86_400_000;
      expect(days).toBeGreaterThan(29.9);
      expect(days).toBeLessThanOrEqual(30);
      expect(tour.stdout).toMatch(/Done\./);

      const recount = run('recount-usage.ts');
      expect(recount.stderr).toBe('');
      expect(recount.status).toBe(0);
      expect(recount.stdout).toMatch(/Usage recounted in table \S+: [1-9]\d* account\(s\) checked/);

      const admin = run('create-admin.ts', ['--username', 'opsbeside', '--email', 'ops@example.test'], {
        ADMIN_PASSWORD: 'a-long-admin-pass',
      });
      expect(admin.stderr).toBe('');
      expect(admin.status).toBe(0);
      const login = await fetch(`${service.url}/admin/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'opsbeside', password: 'a-long-admin-pass' }),
      });
      expect(login.status).toBe(200);

      // A Lsky Pro library (docs/COMPAT.md): imported with a line per file, then skipped on a second run.
      const imported = run('import.ts', ['test/fixtures/lsky']);
      expect(imported.stderr).toBe('');
      expect(imported.status).toBe(0);
      expect(imported.stdout).toMatch(/files 4 imported, 0 skipped, 0 failed\.$/m);
      const url = /imported as (\S+)/.exec(imported.stdout)?.[1] ?? '';
      expect((await fetch(url)).status).toBe(200);
      const again = run('import.ts', ['test/fixtures/lsky']);
      expect(again.status).toBe(0);
      expect(again.stdout).toMatch(
        /accounts 2 matched, 0 created; albums 0 created, 2 skipped; files 0 imported, 4 skipped, 0 failed\.$/m,
      );
    } finally {
      expect(await service.stop()).toBe(0);
    }

    // Stopped: the record is gone, and each script says what to do in one line.
    expect(existsSync(join(dataDir, RUNNING_STACK_FILE))).toBe(false);
    for (const [script, ...args] of [
      ['recount-usage.ts'],
      ['migrate-shards.ts'],
      ['import.ts', 'test/fixtures/lsky'],
    ]) {
      const refused = run(script!, args);
      expect(refused.status).toBe(1);
      expect(refused.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(/^No local stack is running in .+: start it with `npm start`/),
      ]);
    }
    const tour = run('tour.ts');
    expect(tour.status).toBe(1);
    expect(tour.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/does not answer .*is npm start running\?$/),
    ]);
  });
});
