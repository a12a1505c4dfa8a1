// The security page's TOTP panel: setup with the QR code, enable, disable, and recovery codes (shown once).
import { useState } from 'preact/hooks';
import { api, call, type DataOf } from '../../api/client.ts';
import { CodeField, PasswordField, Submit, useForm } from '../../form.tsx';
import { QrCode } from '../../qr.tsx';
import { copyText, Notice, Status } from '../../ui.tsx';

type Setup = DataOf<'/auth/totp/setup', 'post'>;

/**
 * New recovery codes, shown once: copied all at once (one a line) or downloaded as `recovery-codes.txt`
 * (a data: link, which the console's Content-Security-Policy leaves alone: it governs what the page loads,
 * not what it saves).
 */
function RecoveryCodes({ codes }: { codes: string[] }) {
  const [copied, setCopied] = useState('');
  const text = `${codes.join('\n')}\n`;
  return (
    <section class="secret" aria-labelledby="recovery-title">
      <h3 id="recovery-title">Recovery codes</h3>
      <p>
        Each works once in place of an authentication code. Keep them somewhere safe: they are shown only now.
      </p>
      <ul class="codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <div class="actions recovery-actions">
        <button
          type="button"
          onClick={async () =>
            setCopied(
              (await copyText(text))
                ? `${codes.length} recovery codes copied, one a line.`
                : 'Copying was refused: select the codes and copy them, or download them.',
            )
          }
        >
          Copy the codes
        </button>
        <a
          class="button secondary"
          href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`}
          download="recovery-codes.txt"
        >
          Download recovery-codes.txt
        </a>
      </div>
      {copied && <Status message={copied} />}
    </section>
  );
}

export function Totp({ enabled, onChange }: { enabled: boolean; onChange: () => void }) {
  const setupForm = useForm({ password: '' });
  const enableForm = useForm({ code: '' });
  const disableForm = useForm({ code: '', password: '' });
  const regenerateForm = useForm({ password: '' });
  const [setup, setSetup] = useState<Setup | null>(null);
  const [codes, setCodes] = useState<string[]>([]);

  const start = setupForm.submit(async ({ password }) => {
    setSetup(await call(api.POST('/auth/totp/setup', { body: { password } })));
    setupForm.reset();
  });
  const enable = enableForm.submit(async ({ code }) => {
    const result = await call(api.POST('/auth/totp/enable', { body: { code: code.trim() } }));
    setCodes(result.recovery_codes);
    setSetup(null);
    enableForm.reset();
    onChange();
  });
  const disable = disableForm.submit(async ({ code, password }) => {
    await call(
      api.POST('/auth/totp/disable', {
        body: { ...(code ? { code: code.trim() } : {}), ...(password ? { password } : {}) },
      }),
    );
    disableForm.reset();
    setCodes([]);
    onChange();
  });
  const regenerate = regenerateForm.submit(async ({ password }) => {
    setCodes((await call(api.POST('/auth/totp/recovery-codes', { body: { password } }))).recovery_codes);
    regenerateForm.reset();
    onChange();
  });

  return (
    <section aria-labelledby="totp-title">
      <h2 id="totp-title">Two-factor authentication (TOTP)</h2>
      {enabled ? (
        <Notice tone="success">Two-factor authentication is on.</Notice>
      ) : (
        <Notice tone="warning">
          Two-factor authentication is off: your password alone opens your account. Set it up below.
        </Notice>
      )}
      {codes.length > 0 && <RecoveryCodes codes={codes} />}
      {!enabled && !setup && (
        <form onSubmit={start} noValidate class="inline">
          <PasswordField form={setupForm} />
          <Submit form={setupForm}>Set up</Submit>
        </form>
      )}
      {!enabled && setup && (
        <form onSubmit={enable} noValidate>
          <p>
            Scan the code with an authenticator app, or type the secret into it, then enter the code it shows.
          </p>
          <QrCode text={setup.uri} label="QR code of the authenticator secret" />
          <p>
            <a href={setup.uri}>Add it to an authenticator app on this device</a>
          </p>
          <p>
            Secret: <code id="totp-secret">{setup.secret}</code>
          </p>
          <CodeField form={enableForm} />
          <Submit form={enableForm}>Turn on</Submit>
        </form>
      )}
      {enabled && (
        <>
          <form onSubmit={disable} noValidate>
            <h3>Turn off</h3>
            <CodeField form={disableForm} />
            <PasswordField form={disableForm} label="Or the current password" />
            <Submit form={disableForm} secondary>
              Turn off
            </Submit>
          </form>
          <form onSubmit={regenerate} noValidate class="inline">
            <h3>New recovery codes</h3>
            <PasswordField form={regenerateForm} />
            <Submit form={regenerateForm} secondary>
              Make new recovery codes
            </Submit>
          </form>
        </>
      )}
    </section>
  );
}
