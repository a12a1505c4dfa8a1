// The back office's address bans (docs/ABUSE.md "Bans"): the bans in force with their ends, the form that
// bans an address or network, and lifting one. A ban covering the administrator's own address is refused.
import { useId } from 'preact/hooks';
import { ActionButton, useAction } from '../action.tsx';
import { api, byId, call } from '../api/client.ts';
import { Field, useForm } from '../form.tsx';
import { FormError, formatTime, ListTable, Page, useLoad } from '../ui.tsx';

/** A new ban: the network, why, and when it ends (a local date and time; empty: permanent). */
function BanForm({ onSaved }: { onSaved: () => Promise<unknown> | unknown }) {
  const titleId = useId();
  const form = useForm({ cidr: '', reason: '', expires_at: '' });
  const save = form.submit(async (values) => {
    const ends = values.expires_at.trim();
    await call(
      api.POST('/api/v1/admin/bans', {
        body: {
          cidr: values.cidr.trim(),
          reason: values.reason.trim(),
          ...(ends ? { expires_at: new Date(ends).toISOString() } : {}),
        },
      }),
    );
    form.reset();
    await onSaved();
  });
  return (
    <form onSubmit={save} noValidate aria-labelledby={titleId}>
      <h2 id={titleId}>New ban</h2>
      <Field
        form={form}
        name="cidr"
        label="Address or network"
        hint="IPv4 or IPv6: 203.0.113.7, 203.0.113.0/24, 2001:db8::/48"
      />
      <Field form={form} name="reason" label="Reason" hint="Shown to the banned address" maxLength={200} />
      <Field form={form} name="expires_at" type="datetime-local" label="Ends (empty: permanent)" />
      <div class="actions">
        <button type="submit" disabled={form.busy}>
          Ban
        </button>
      </div>
      {form.formError && <FormError message={form.formError} />}
    </form>
  );
}

export function AdminBans() {
  const bans = useLoad(() => call(api.GET('/api/v1/admin/bans')));
  const action = useAction(bans.reload);
  return (
    <Page title="Bans">
      <p>
        A banned address or network is refused on every page and API call. A change holds at once here and
        everywhere within a minute.
      </p>
      {action.view}
      <ListTable
        list={bans}
        items={bans.data?.items}
        columns={['Network', 'Reason', 'Since', 'Ends', 'By']}
        actions
        empty="No address is banned."
        hint="Ban one with the form below."
        row={(ban) => (
          <tr key={ban.id}>
            <td>
              <code>{ban.cidr}</code>
            </td>
            <td class="wrap">{ban.reason}</td>
            <td>{formatTime(ban.created_at)}</td>
            <td>{ban.expires_at ? formatTime(ban.expires_at) : 'never'}</td>
            <td class="wrap">{ban.created_by}</td>
            <td>
              <ActionButton
                action={action}
                work={() => call(api.DELETE('/api/v1/admin/bans/{id}', byId(ban.id)))}
                done={`Ban on ${ban.cidr} lifted`}
              >
                Lift<span class="visually-hidden"> {ban.cidr}</span>
              </ActionButton>
            </td>
          </tr>
        )}
      />
      <BanForm onSaved={bans.reload} />
    </Page>
  );
}
