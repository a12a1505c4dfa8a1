// The security page's export of the account's data and its deletion (docs/ACCOUNTS.md "Export", "Deleting
// an account"): the latest export's state, and a deletion asked with the password (and the code when TOTP
// is on), shown with its date and the note that logging in cancels it.
import { ActionButton, useAction } from '../../action.tsx';
import { api, call } from '../../api/client.ts';
import { CodeField, PasswordField, Submit, useForm } from '../../form.tsx';
import { FormError, formatTime, Status, useLoad } from '../../ui.tsx';

const STATES = {
  pending: 'waiting for the worker',
  running: 'being built',
  ready: 'ready: the link was mailed to you (valid 24 hours)',
  failed: 'failed; ask again',
} as const;

export function Export() {
  const latest = useLoad(() => call(api.GET('/api/v1/account/export')));
  const action = useAction(latest.reload);
  const shown = latest.data;
  const busy = shown?.state === 'pending' || shown?.state === 'running';
  return (
    <section aria-labelledby="export-title">
      <h2 id="export-title">Export my data</h2>
      <p>
        A ZIP of your original files and a JSON of your records, albums, shares, orders and security events.
      </p>
      {(action.error || latest.error) && <FormError message={action.error || latest.error} />}
      {shown && (
        <Status
          message={`Export asked ${formatTime(shown.requested_at)}: ${STATES[shown.state]}${shown.files !== null ? ` (${shown.files} files)` : ''}.`}
        />
      )}
      {shown?.download_url && (
        <p>
          <a href={shown.download_url}>Download the export</a> (the link works 24 hours; the ZIP is kept 2
          days).
        </p>
      )}
      {!busy && (
        <ActionButton action={action} work={() => call(api.POST('/api/v1/account/export', { body: {} }))}>
          Export my data
        </ActionButton>
      )}
    </section>
  );
}

export function DeleteAccount({
  totp,
  scheduledFor,
  onChange,
}: {
  totp: boolean;
  scheduledFor: string | null;
  onChange: () => void;
}) {
  const form = useForm({ current_password: '', code: '' });
  const remove = form.submit(async ({ current_password, code }) => {
    const body = { current_password, ...(totp ? { code: code.trim() } : {}) };
    await call(api.POST('/api/v1/account/delete', { body }));
    form.reset();
    onChange();
  });
  return (
    <section aria-labelledby="delete-title">
      <h2 id="delete-title">Delete account</h2>
      {scheduledFor ? (
        <Status
          message={`This account will be deleted on ${formatTime(scheduledFor)}, with every file, album and share. Logging in before then cancels it.`}
        />
      ) : (
        <form onSubmit={remove} noValidate aria-label="Delete the account">
          <p>
            Your files, renditions, albums, shares, tokens and passkeys are deleted after 7 days; logging in
            before then cancels it. Orders are kept for accounting, without your name.
          </p>
          <PasswordField form={form} name="current_password" />
          {totp && <CodeField form={form} label="Code from the app, or a recovery code" />}
          <Submit form={form} secondary>
            Delete account
          </Submit>
        </form>
      )}
    </section>
  );
}
