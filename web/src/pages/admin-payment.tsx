// The back office's payment settings: the default channel, the mock cashier's switch, and each channel's
// fields (secrets write-only). Changing a key, a gateway URL or the mock cashier's switch takes the
// administrator's password again (docs/PAYMENTS-GUIDE.md): a stolen session alone cannot point a channel
// elsewhere nor let buyers pay nothing.
import { useState } from 'preact/hooks';
import { useAction } from '../action.tsx';
import { api, call, type DataOf } from '../api/client.ts';
import { Field, PasswordField, Submit, useForm } from '../form.tsx';
import { FormError, Page, Status, useLoad } from '../ui.tsx';

type PaymentSettings = DataOf<'/api/v1/admin/payment', 'get'>;
type Channel = 'channel_a' | 'channel_b' | 'channel_c';

/** Secrets pasted as PEM text: their line breaks matter, so they are text areas, not one-line inputs. */
const PEM_FIELDS = new Set(['private_key', 'public_key', 'platform_public_key']);

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
  initial.current_password = '';
  const form = useForm(initial);
  const [saved, setSaved] = useState('');
  const save = form.submit(async (values) => {
    const body: Record<string, unknown> = { enabled: values.enabled === 'true' };
    for (const name of fields.plain) body[name] = values[name] || null;
    // An empty secret keeps the stored one (docs/SPEC.md 4.3).
    for (const name of fields.secret) if (values[name]) body[name] = values[name];
    const password = values.current_password ? { current_password: values.current_password } : {};
    await call(api.PUT('/api/v1/admin/payment', { body: { [channel]: body, ...password } }));
    form.reset({
      ...values,
      ...Object.fromEntries(fields.secret.map((name) => [name, ''])),
      current_password: '',
    });
    setSaved(`${channel} saved`);
    onSaved();
  });
  return (
    <form onSubmit={save} noValidate class="channel" aria-labelledby={`${channel}-title`}>
      <h2 id={`${channel}-title`}>{channel}</h2>
      <p>
        Notification address to give the channel: <code class="wrap">{current.notify_urls[channel]}</code>
      </p>
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
          multiline={PEM_FIELDS.has(name)}
          hint={PEM_FIELDS.has(name) ? 'PEM text, pasted whole with its BEGIN and END lines.' : undefined}
          autoComplete="off"
        />
      ))}
      <PasswordField
        form={form}
        name="current_password"
        label="Your password (to change a key or a gateway URL)"
      />
      <Submit form={form}>Save {channel}</Submit>
      {saved && <Status message={saved} />}
    </form>
  );
}

/** The mock cashier's switch: on, buyers of mock orders pay nothing, so it takes the password. */
function MockForm({ enabled, onSaved }: { enabled: boolean; onSaved: () => void }) {
  const form = useForm({ current_password: '' });
  const [saved, setSaved] = useState('');
  const save = form.submit(async (values) => {
    const body = { mock: { enabled: !enabled }, current_password: values.current_password };
    await call(api.PUT('/api/v1/admin/payment', { body }));
    form.reset();
    setSaved(`Mock cashier ${enabled ? 'off' : 'on'}`);
    onSaved();
  });
  return (
    <form onSubmit={save} noValidate aria-labelledby="mock-title">
      <h2 id="mock-title">Mock cashier: {enabled ? 'on' : 'off'}</h2>
      <PasswordField form={form} name="current_password" label="Your password (to switch the mock cashier)" />
      <Submit form={form}>Turn the mock cashier {enabled ? 'off' : 'on'}</Submit>
      {saved && <Status message={saved} />}
    </form>
  );
}

export function AdminPayment() {
  const settings = useLoad(() => call(api.GET('/api/v1/admin/payment')));
  const action = useAction(settings.reload);
  const data = settings.data;
  const put = (body: { default_gateway: PaymentSettings['default_gateway'] }, done: string) =>
    action.run(() => call(api.PUT('/api/v1/admin/payment', { body })), done);
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
                void put({ default_gateway: value }, `Default channel: ${value}`);
              }}
            >
              {(['manual', 'mock', 'channel_a', 'channel_b', 'channel_c'] as const).map((name) => (
                <option key={name}>{name}</option>
              ))}
            </select>
          </div>
          <MockForm enabled={data.mock.enabled} onSaved={settings.reload} />
          {(['channel_a', 'channel_b', 'channel_c'] as const).map((channel) => (
            <ChannelForm key={channel} channel={channel} current={data} onSaved={settings.reload} />
          ))}
        </>
      )}
    </Page>
  );
}
