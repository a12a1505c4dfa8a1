// API tokens: create (the secret is shown once, with a ready PicGo configuration), list, revoke.
import { useState } from 'preact/hooks';
import { ActionButton, useAction } from '../action.tsx';
import { api, call, type DataOf } from '../api/client.ts';
import { Field, Submit, useForm } from '../form.tsx';
import { copyText, DataTable, FormError, formatTime, Page, useLoad } from '../ui.tsx';

type CreatedToken = DataOf<'/api/v1/tokens', 'post', 201>;

/** PicGo's configuration for its web-uploader plugin, pointed at this service with the new token. */
export function picgoConfig(token: string, origin: string): string {
  return JSON.stringify(
    {
      picBed: {
        uploader: 'web-uploader',
        current: 'web-uploader',
        'web-uploader': {
          url: `${origin}/api/v1/upload`,
          paramName: 'file',
          jsonPath: 'data.url',
          customHeader: JSON.stringify({ Authorization: `Bearer ${token}` }),
          customBody: '',
        },
      },
      picgoPlugins: { 'picgo-plugin-web-uploader': true },
    },
    null,
    2,
  );
}

export function TokensPage() {
  const tokens = useLoad(() => call(api.GET('/api/v1/tokens')));
  const form = useForm({ name: '' });
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const action = useAction(tokens.reload);

  const create = form.submit(async ({ name }) => {
    const token = await call(api.POST('/api/v1/tokens', { body: { name } }));
    setCreated(token);
    form.reset();
    await tokens.reload();
  });

  return (
    <Page title="API tokens">
      <p>
        Tokens upload and list files on your behalf (Authorization: Bearer &lt;token&gt;), for tools like
        PicGo.
      </p>
      <form onSubmit={create} noValidate class="inline">
        <Field form={form} name="name" label="Token name" required maxLength={64} />
        <Submit form={form}>Create token</Submit>
      </form>
      {created && (
        <section class="secret" aria-labelledby="new-token-title">
          <h2 id="new-token-title">Token {created.name} created</h2>
          <p>Copy it now: it is shown only this once.</p>
          <label for="new-token">Token</label>
          <input
            id="new-token"
            readOnly
            value={created.token}
            onFocus={(event) => (event.target as HTMLInputElement).select()}
          />
          <button
            type="button"
            onClick={async () =>
              action.say((await copyText(created.token)) ? 'Token copied' : 'Select the token and copy it')
            }
          >
            Copy token
          </button>
          <label for="picgo-config">PicGo configuration (web-uploader plugin)</label>
          <textarea
            id="picgo-config"
            readOnly
            rows={14}
            value={picgoConfig(created.token, location.origin)}
          />
          <button type="button" class="secondary" onClick={() => setCreated(null)}>
            I have saved it
          </button>
        </section>
      )}
      {action.view}
      {tokens.error && <FormError message={tokens.error} />}
      <h2>Your tokens</h2>
      {tokens.data && tokens.data.length === 0 && <p>No tokens.</p>}
      {tokens.data && tokens.data.length > 0 && (
        <DataTable columns={['Name', 'Starts with', 'Created', 'Last used']} actions>
          {tokens.data.map((token) => (
            <tr key={token.id}>
              <td>{token.name}</td>
              <td>
                <code>{token.prefix}…</code>
              </td>
              <td>{formatTime(token.created_at)}</td>
              <td>{formatTime(token.last_used_at)}</td>
              <td>
                <ActionButton
                  action={action}
                  work={() => call(api.DELETE('/api/v1/tokens/{id}', { params: { path: { id: token.id } } }))}
                  done={`Token ${token.name} revoked`}
                >
                  Revoke<span class="visually-hidden"> {token.name}</span>
                </ActionButton>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </Page>
  );
}
