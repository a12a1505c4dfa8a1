// `npm run admin:create -- --username ops --email ops@example.com`: creates an administrator directly in
// the table (the deployed one with TABLE_NAME and AWS credentials, or the local one while `npm start`
// runs). The password comes from ADMIN_PASSWORD or standard input, never from the command line, so it
// stays out of shell history, stage files and Lambda environments.
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import * as z from '#lib/platform/zod.ts';
import { loadSettingsOrExit } from './settings.ts';

async function readPassword(): Promise<string> {
  const fromEnv = process.env.ADMIN_PASSWORD;
  if (fromEnv) return fromEnv;
  process.stderr.write('Password for the new administrator: ');
  if (!process.stdin.isTTY) {
    // Piped in (a script, a secret manager): one line.
    const reader = createInterface({ input: process.stdin, terminal: false });
    for await (const line of reader) {
      reader.close();
      return line;
    }
    return '';
  }
  return readWithoutEcho(process.stdin);
}

/** Typed at a terminal: nothing is echoed, as passwords are read elsewhere. */
function readWithoutEcho(stdin: NodeJS.ReadStream): Promise<string> {
  return new Promise((resolve) => {
    let value = '';
    stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\u0003') {
          stdin.setRawMode(false);
          process.stderr.write('\n');
          process.exit(130);
        }
        if (char === '\r' || char === '\n' || char === '\u0004') {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off('data', onData);
          process.stderr.write('\n');
          resolve(value);
          return;
        }
        value = char === '\u007f' || char === '\b' ? value.slice(0, -1) : value + char;
      }
    };
    stdin.on('data', onData);
    stdin.resume();
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { username: { type: 'string' }, email: { type: 'string' } },
    strict: true,
  });
  await loadSettingsOrExit();
  const { emailField, newPasswordField, usernameField } = await import('#lib/http/schemas/accounts.ts');
  const parsed = z
    .object({ username: usernameField, email: emailField, password: newPasswordField })
    .safeParse({ username: values.username, email: values.email, password: await readPassword() });
  if (!parsed.success) {
    for (const issue of parsed.error.issues) console.error(`${issue.path.join('.')}: ${issue.message}`);
    console.error(
      'Usage: npm run admin:create -- --username <name> --email <address>  (password: ADMIN_PASSWORD or stdin)',
    );
    process.exit(1);
  }
  // The accounts function's own dependencies: the script does what its back-office route does.
  const [{ accountsDeps }, { config }] = await Promise.all([
    import('#functions/accounts/deps.ts'),
    import('#lib/platform/config/index.ts'),
  ]);
  try {
    const admin = await accountsDeps().accounts.registration.createAdministrator(parsed.data);
    console.log(`Administrator ${admin.username} (${admin.id}) created in table ${config.table_name}.`);
  } catch (error) {
    const status = (error as { status?: number }).status;
    console.error(status ? (error as Error).message : `Failed: ${(error as Error).message}`);
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  console.error('Failed:', error instanceof Error ? error.message : error);
  process.exit(1);
});
