// The back office: accounts, plans, orders (manual write-off), payment settings (secrets write-only) and
// files moderation. Every call here needs an administrator session; the API refuses anyone else.
import { useId, useState } from 'preact/hooks';
import { ApiError, api, call, type DataOf } from '../api/client.ts';
import {
  DataTable,
  Field,
  FormError,
  formatBytes,
  formatMoney,
  formatTime,
  Page,
  Status,
  useForm,
  useLoad,
} from '../ui.tsx';
import { FileCard } from './files.tsx';

function useAction(after: () => Promise<unknown> | unknown) {
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const run = async (work: () => Promise<unknown>, done: string) => {
    setError('');
    setMessage('');
    try {
      await work();
      setMessage(done);
      await after();
    } catch (caught) {
      setError(caught instanceof ApiError ? caught.describe() : String(caught));
    }
  };
  const view = (
    <>
      {message && <Status message={message} />}
      {error && <FormError message={error} />}
    </>
  );
  return { run, view };
}

export function AdminAccounts() {
  const [query, setQuery] = useState('');
  const [search, setSearch] = useState('');
  const accounts = useLoad(
    () =>
      call(
        api.GET('/api/v1/admin/accounts', {
          params: { query: { limit: '50', ...(search ? { q: search } : {}) } },
        }),
      ),
    [search],
  );
  const action = useAction(accounts.reload);
  const create = useForm({ username: '', email: '', password: '', current_password: '' });
  const [created, setCreated] = useState('');
  const submitCreate = create.submit(async (values) => {
    setCreated('');
    await call(api.POST('/api/v1/admin/accounts', { body: values }));
    create.reset();
    setCreated(`Administrator ${values.username} created`);
    await accounts.reload();
  });
  return (
    <Page title="Accounts">
      <form
        class="inline"
        aria-label="Search accounts"
        onSubmit={(event) => {
          event.preventDefault();
          setSearch(query.trim());
        }}
      >
        <div class="field">
          <label for="account-search">Username or e-mail</label>
          <input
            id="account-search"
            type="search"
            value={query}
            onInput={(event) => setQuery((event.target as HTMLInputElement).value)}
          />
        </div>
        <button type="submit">Search</button>
      </form>
      {accounts.error && <FormError message={accounts.error} />}
      {action.view}
      <DataTable columns={['Username', 'E-mail', 'Role', 'Status', 'Usage']} actions>
        {accounts.data?.items.map((account) => (
          <tr key={account.id}>
            <td>{account.username}</td>
            <td>{account.email ?? '—'}</td>
            <td>{account.role}</td>
            <td>{account.status}</td>
            <td>
              {account.usage
                ? `${formatBytes(account.usage.used_bytes)} / ${formatBytes(account.usage.quota_bytes)}`
                : '—'}
            </td>
            <td class="actions">
              <button
                type="button"
                class="secondary"
                onClick={() =>
                  action.run(
                    () =>
                      call(
                        api.PATCH('/api/v1/admin/accounts/{id}', {
                          params: { path: { id: account.id } },
                          body: { status: account.status === 'active' ? 'disabled' : 'active' },
                        }),
                      ),
                    `${account.username} is now ${account.status === 'active' ? 'disabled' : 'active'}`,
                  )
                }
              >
                {account.status === 'active' ? 'Disable' : 'Enable'}
                <span class="visually-hidden"> {account.username}</span>
              </button>
              {account.totp_enabled && (
                <button
                  type="button"
                  class="secondary"
                  onClick={() =>
                    action.run(
                      () =>
                        call(
                          api.POST('/api/v1/admin/accounts/{id}/totp/reset', {
                            params: { path: { id: account.id } },
                            body: {},
                          }),
                        ),
                      `Two-factor authentication of ${account.username} reset`,
                    )
                  }
                >
                  Reset TOTP<span class="visually-hidden"> of {account.username}</span>
                </button>
              )}
            </td>
          </tr>
        ))}
      </DataTable>
      <h2 id="new-admin-title">New administrator</h2>
      <form onSubmit={submitCreate} noValidate aria-labelledby="new-admin-title">
        <Field form={create} name="username" label="Username" autoComplete="off" />
        <Field form={create} name="email" label="E-mail" type="email" autoComplete="off" />
        <Field
          form={create}
          name="password"
          label="Their password"
          type="password"
          autoComplete="new-password"
        />
        <Field
          form={create}
          name="current_password"
          label="Your password"
          type="password"
          autoComplete="current-password"
        />
        <button type="submit" disabled={create.busy}>
          Create administrator
        </button>
        {create.formError && <FormError message={create.formError} />}
        {created && <Status message={created} />}
      </form>
    </Page>
  );
}

type Plan = DataOf<'/api/v1/admin/plans', 'get'>[number];

/**
 * A plan's fields as an administrator types them: the price in cents, the quota in GiB (empty: unlimited),
 * the duration in days (empty: permanent). New when `plan` is absent, else an edit of it.
 */
function PlanForm({
  plan,
  onSaved,
  onCancel,
}: {
  plan?: Plan;
  onSaved: (message: string) => Promise<unknown> | unknown;
  onCancel?: () => void;
}) {
  const titleId = useId();
  const form = useForm({
    name: plan?.name ?? '',
    description: plan?.description ?? '',
    amount_cents: plan ? String(plan.amount_cents) : '',
    quota_gib: plan && plan.quota_bytes !== null ? String(plan.quota_bytes / 1024 ** 3) : '',
    duration_days: plan?.duration_days ? String(plan.duration_days) : '',
  });
  const save = form.submit(async (values) => {
    const body = {
      name: values.name,
      description: values.description,
      amount_cents: Number(values.amount_cents),
      quota_bytes: values.quota_gib ? Math.round(Number(values.quota_gib) * 1024 ** 3) : null,
      duration_days: values.duration_days ? Number(values.duration_days) : 0,
    };
    if (plan) {
      await call(api.PATCH('/api/v1/admin/plans/{id}', { params: { path: { id: plan.id } }, body }));
    } else {
      await call(api.POST('/api/v1/admin/plans', { body }));
      form.reset();
    }
    await onSaved(`${values.name} ${plan ? 'saved' : 'created'}`);
  });
  return (
    <form onSubmit={save} noValidate aria-labelledby={titleId}>
      <h2 id={titleId}>{plan ? `Edit ${plan.name}` : 'New plan'}</h2>
      <Field form={form} name="name" label="Name" />
      <Field form={form} name="description" label="Description" />
      <Field form={form} name="amount_cents" label="Price in cents" inputMode="numeric" />
      <Field form={form} name="quota_gib" label="Quota in GiB (empty: unlimited)" inputMode="decimal" />
      <Field
        form={form}
        name="duration_days"
        label="Duration in days (empty: permanent)"
        inputMode="numeric"
      />
      <div class="actions">
        <button type="submit" disabled={form.busy}>
          {plan ? 'Save plan' : 'Create plan'}
        </button>
        {onCancel && (
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      {form.formError && <FormError message={form.formError} />}
    </form>
  );
}

export function AdminPlans() {
  const plans = useLoad(() => call(api.GET('/api/v1/admin/plans')));
  const action = useAction(plans.reload);
  const [editing, setEditing] = useState<Plan | null>(null);
  const [saved, setSaved] = useState('');
  const afterSave = async (message: string) => {
    setEditing(null);
    setSaved(message);
    await plans.reload();
  };
  return (
    <Page title="Plans">
      {plans.error && <FormError message={plans.error} />}
      {action.view}
      {saved && <Status message={saved} />}
      <DataTable columns={['Name', 'Price', 'Quota', 'Days', 'On sale']} actions>
        {plans.data?.map((plan) => (
          <tr key={plan.id}>
            <td>{plan.name}</td>
            <td>{formatMoney(plan.amount_cents)}</td>
            <td>{formatBytes(plan.quota_bytes)}</td>
            <td>{plan.duration_days || '—'}</td>
            <td>{plan.active ? 'yes' : 'no'}</td>
            <td class="actions">
              <button
                type="button"
                class="secondary"
                onClick={() => {
                  setSaved('');
                  setEditing(plan);
                }}
              >
                Edit<span class="visually-hidden"> {plan.name}</span>
              </button>
              <button
                type="button"
                class="secondary"
                onClick={() =>
                  action.run(
                    () =>
                      call(
                        api.PATCH('/api/v1/admin/plans/{id}', {
                          params: { path: { id: plan.id } },
                          body: { active: !plan.active },
                        }),
                      ),
                    `${plan.name} ${plan.active ? 'withdrawn' : 'on sale'}`,
                  )
                }
              >
                {plan.active ? 'Withdraw' : 'Put on sale'}
                <span class="visually-hidden"> {plan.name}</span>
              </button>
              <button
                type="button"
                class="secondary"
                onClick={() =>
                  action.run(
                    () => call(api.DELETE('/api/v1/admin/plans/{id}', { params: { path: { id: plan.id } } })),
                    `${plan.name} deleted`,
                  )
                }
              >
                Delete<span class="visually-hidden"> {plan.name}</span>
              </button>
            </td>
          </tr>
        ))}
      </DataTable>
      {editing && (
        <PlanForm key={editing.id} plan={editing} onSaved={afterSave} onCancel={() => setEditing(null)} />
      )}
      <PlanForm onSaved={afterSave} />
    </Page>
  );
}

export function AdminOrders() {
  const orders = useLoad(() =>
    call(api.GET('/api/v1/admin/orders', { params: { query: { limit: '100' } } })),
  );
  const action = useAction(orders.reload);
  return (
    <Page title="Orders">
      {orders.error && <FormError message={orders.error} />}
      {action.view}
      <DataTable columns={['Plan', 'Amount', 'Channel', 'Status', 'Created']} actions>
        {orders.data?.items.map((order) => (
          <tr key={order.id}>
            <td>{order.plan_name}</td>
            <td>{formatMoney(order.amount_cents)}</td>
            <td>{order.provider}</td>
            <td>{order.status}</td>
            <td>{formatTime(order.created_at)}</td>
            <td>
              {order.provider === 'manual' && order.status === 'pending' && (
                <button
                  type="button"
                  onClick={() =>
                    action.run(
                      () =>
                        call(
                          api.POST('/api/v1/admin/orders/{id}/pay', {
                            params: { path: { id: order.id } },
                          }),
                        ),
                      `Order ${order.id} written off as paid`,
                    )
                  }
                >
                  Write off<span class="visually-hidden"> order {order.id}</span>
                </button>
              )}
            </td>
          </tr>
        ))}
      </DataTable>
    </Page>
  );
}

type PaymentSettings = DataOf<'/api/v1/admin/payment', 'get'>;
type Channel = 'channel_a' | 'channel_b' | 'channel_c';

/** Plain fields shown with their value; secrets are write-only (the API says only whether one is set). */
const CHANNEL_FIELDS: Record<Channel, { plain: string[]; secret: string[] }> = {
  channel_a: { plain: ['app_id', 'seller_id', 'gateway_url'], secret: ['private_key', 'public_key'] },
  channel_b: {
    plain: ['app_id', 'mch_id', 'serial_no', 'platform_serial_no', 'api_base_url'],
    secret: ['private_key', 'api_v3_key', 'platform_public_key'],
  },
  channel_c: { plain: ['pid', 'gateway_url', 'api_url', 'submit_url', 'pay_type'], secret: ['key'] },
};

function ChannelForm({
  channel,
  current,
  onSaved,
}: {
  channel: Channel;
  current: PaymentSettings;
  onSaved: () => void;
}) {
  const settings = current[channel] as unknown as Record<string, string | boolean | null>;
  const fields = CHANNEL_FIELDS[channel];
  const initial: Record<string, string> = { enabled: settings.enabled ? 'true' : '' };
  for (const name of fields.plain) initial[name] = (settings[name] as string | null) ?? '';
  for (const name of fields.secret) initial[name] = '';
  const form = useForm(initial);
  const [saved, setSaved] = useState('');
  const save = form.submit(async (values) => {
    const body: Record<string, unknown> = { enabled: values.enabled === 'true' };
    for (const name of fields.plain) body[name] = values[name] || null;
    // An empty secret keeps the stored one (docs/SPEC.md 4.3).
    for (const name of fields.secret) if (values[name]) body[name] = values[name];
    await call(api.PUT('/api/v1/admin/payment', { body: { [channel]: body } }));
    form.reset({ ...values, ...Object.fromEntries(fields.secret.map((name) => [name, ''])) });
    setSaved(`${channel} saved`);
    onSaved();
  });
  return (
    <form onSubmit={save} noValidate class="channel" aria-labelledby={`${channel}-title`}>
      <h2 id={`${channel}-title`}>{channel}</h2>
      <div class="check">
        <input
          id={`${channel}-enabled`}
          type="checkbox"
          checked={form.values.enabled === 'true'}
          onChange={(event) => form.set('enabled', (event.target as HTMLInputElement).checked ? 'true' : '')}
        />
        <label for={`${channel}-enabled`}>Enabled</label>
      </div>
      {fields.plain.map((name) => (
        <Field key={name} form={form} name={name} label={name.replace(/_/g, ' ')} autoComplete="off" />
      ))}
      {fields.secret.map((name) => (
        <Field
          key={name}
          form={form}
          name={name}
          label={`${name.replace(/_/g, ' ')} (${settings[`${name}_set`] ? 'set; empty keeps it' : 'not set'})`}
          type="password"
          autoComplete="off"
        />
      ))}
      <button type="submit" disabled={form.busy}>
        Save {channel}
      </button>
      {form.formError && <FormError message={form.formError} />}
      {saved && <Status message={saved} />}
    </form>
  );
}

export function AdminPayment() {
  const settings = useLoad(() => call(api.GET('/api/v1/admin/payment')));
  const action = useAction(settings.reload);
  const data = settings.data;
  return (
    <Page title="Payment settings">
      {settings.error && <FormError message={settings.error} />}
      {action.view}
      {data && (
        <>
          <div class="field">
            <label for="default-gateway">Default channel</label>
            <select
              id="default-gateway"
              value={data.default_gateway}
              onChange={(event) => {
                const value = (event.target as HTMLSelectElement).value as PaymentSettings['default_gateway'];
                void action.run(
                  () => call(api.PUT('/api/v1/admin/payment', { body: { default_gateway: value } })),
                  `Default channel: ${value}`,
                );
              }}
            >
              {(['manual', 'mock', 'channel_a', 'channel_b', 'channel_c'] as const).map((name) => (
                <option key={name}>{name}</option>
              ))}
            </select>
          </div>
          <div class="check">
            <input
              id="mock-enabled"
              type="checkbox"
              checked={data.mock.enabled}
              onChange={(event) => {
                const enabled = (event.target as HTMLInputElement).checked;
                void action.run(
                  () => call(api.PUT('/api/v1/admin/payment', { body: { mock: { enabled } } })),
                  `Mock cashier ${enabled ? 'on' : 'off'}`,
                );
              }}
            />
            <label for="mock-enabled">Mock cashier enabled</label>
          </div>
          {(['channel_a', 'channel_b', 'channel_c'] as const).map((channel) => (
            <ChannelForm key={channel} channel={channel} current={data} onSaved={settings.reload} />
          ))}
        </>
      )}
    </Page>
  );
}

export function AdminFiles() {
  const [version, setVersion] = useState(0);
  const files = useLoad(
    () => call(api.GET('/api/v1/admin/files', { params: { query: { limit: '60' } } })),
    [version],
  );
  return (
    <Page title="Files moderation">
      {files.error && <FormError message={files.error} />}
      {files.data && files.data.items.length === 0 && <p>No files.</p>}
      <ul class="grid" aria-label="All files">
        {files.data?.items.map((file) => (
          <FileCard key={file.id} file={file} admin onChange={() => setVersion((value) => value + 1)} />
        ))}
      </ul>
    </Page>
  );
}
