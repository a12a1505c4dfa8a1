// Reporting a file to the moderators (`#/report?url=…`), open to anyone, logged in or not: the link the
// Report link named (editable), a reason and an optional note (docs/MODERATION.md "Reports").
import { useId, useState } from 'preact/hooks';
import { api, call } from '../api/client.ts';
import { Field, Submit, useForm } from '../form.tsx';
import { useProofOfWork } from '../proof-of-work.tsx';
import { REASONS } from '../report-reasons.ts';
import { Page, Status } from '../ui.tsx';

type Reason = keyof typeof REASONS;

export function ReportPage({ url = '' }: { url?: string | undefined }) {
  const id = useId();
  const form = useForm({ url, reason: '', note: '' });
  const [sent, setSent] = useState(false);
  const proof = useProofOfWork();
  const submit = form.submit(async ({ url, reason, note }) => {
    const body = {
      url: url.trim(),
      reason: reason as Reason,
      ...(note.trim() ? { note: note.trim() } : {}),
      ...(await proof.altcha()),
    };
    await call(api.POST('/api/v1/reports', { body }));
    setSent(true);
  });
  const reasonError = form.errors.reason;
  return (
    <Page title="Report an image">
      {sent ? (
        <Status message="Thank you: the moderators will look at it." />
      ) : (
        <form onSubmit={submit} noValidate>
          <p>Tell the moderators what is wrong with an image of this service. You need no account.</p>
          <Field
            form={form}
            name="url"
            label="Link to the image or share"
            type="url"
            required
            hint="The image's link (…/i/…) or the share's page (…/s/…)."
          />
          <div class="field">
            <label for={`${id}-reason`}>Reason</label>
            <select
              id={`${id}-reason`}
              required
              value={form.values.reason}
              aria-invalid={reasonError ? 'true' : undefined}
              aria-describedby={reasonError ? `${id}-reason-error` : undefined}
              onChange={(event) => form.set('reason', (event.target as HTMLSelectElement).value)}
            >
              <option value="">Choose a reason</option>
              {Object.entries(REASONS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
            {reasonError && (
              <p class="error" id={`${id}-reason-error`}>
                {reasonError}
              </p>
            )}
          </div>
          <Field form={form} name="note" label="Note (optional)" maxLength={1000} multiline />
          {proof.widget}
          <Submit form={form}>Send report</Submit>
        </form>
      )}
    </Page>
  );
}
