// `npm run admin:create`: how an operator makes the first administrator of a deployed stage.
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { handler } from '#functions/accounts/handler.ts';
import { apiEvent, lambdaContext, parseBody } from '#test/support/events.ts';
import { provisionTestStack } from '#test/support/stack.ts';

beforeAll(async () => {
  await provisionTestStack();
});

function createAdmin(args: string[], password: string, input?: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'scripts/create-admin.ts', ...args], {
    env: { ...process.env, ADMIN_PASSWORD: password },
    input,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

/** The administrator made below, logging in at one door. */
const logIn = (path: string) =>
  handler(
    apiEvent({ method: 'POST', path, body: { username: 'opsadmin', password: 'a-long-admin-pass' } }),
    lambdaContext,
  );

describe('npm run admin:create', () => {
  it('creates an administrator who can log in at the admin door only', { timeout: 90_000 }, async () => {
    const run = createAdmin(['--username', 'opsadmin', '--email', 'ops@example.test'], 'a-long-admin-pass');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/Administrator opsadmin \(.+\) created/);
    expect(run.stdout).not.toContain('a-long-admin-pass');

    const adminLogin = await logIn('/admin/auth/login');
    expect(adminLogin.statusCode).toBe(200);
    expect(parseBody(adminLogin)).toMatchObject({ data: { user: { role: 'admin', username: 'opsadmin' } } });
    const userDoor = await logIn('/auth/login');
    expect(userDoor.statusCode).toBe(401);
  });

  it('refuses a taken name and a short password, naming the problem', { timeout: 90_000 }, () => {
    const taken = createAdmin(
      ['--username', 'opsadmin', '--email', 'other@example.test'],
      'a-long-admin-pass',
    );
    expect(taken.status).toBe(1);
    expect(taken.stderr).toMatch(/username/);
    const short = createAdmin(['--username', 'second', '--email', 'second@example.test'], 'short');
    expect(short.status).toBe(1);
    expect(short.stderr).toMatch(/^password:/m);
  });
});
