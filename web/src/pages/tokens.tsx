// API tokens: create (the secret is shown once, with ready configurations for PicGo, ShareX, Flameshot and
// curl), list, revoke; and the size a tool may upload directly.
import { useState } from 'preact/hooks';
import { ActionButton, useAction } from '../action.tsx';
import { api, byId, call, type DataOf } from '../api/client.ts';
import { DIRECT_UPLOAD_LIMIT } from '../api/upload.ts';
import { Field, Submit, useForm } from '../form.tsx';
import { useSite } from '../site.ts';
import { formatBytes, formatTime, ListTable, Page, useLoad } from '../ui.tsx';
import {
  curlCommand,
  curlDeleteCommand,
  flameshotCommand,
  picgoConfig,
  sharexFile,
} from '../uploader-configs.ts';

type CreatedToken = DataOf<'/api/v1/tokens', 'post', 201>;

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
        Tokens upload, list and delete files on your behalf (Authorization: Bearer &lt;token&gt;), for tools
        like PicGo, ShareX and Flameshot: a new token comes with a ready configuration for each.
      </p>
      <p class="limit-note" id="upload-limit">
        A tool uploads files of up to {formatBytes(DIRECT_UPLOAD_LIMIT)} (the service's default{' '}
        <code>upload.max_bytes</code>; a stage may set less). A larger file is refused (HTTP 413, naming the
        limit): upload it on <a href="#/files">My files</a>, which sends large files straight to storage.
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
          <button type="button" onClick={() => action.copy(created.token, 'Token')}>
            Copy token
          </button>
          <UploaderConfigs token={created.token} origin={location.origin} />
          <button type="button" class="secondary" onClick={() => setCreated(null)}>
            I have saved it
          </button>
        </section>
      )}
      {action.view}
      <h2>Your tokens</h2>
      <ListTable
        list={tokens}
        items={tokens.data}
        columns={['Name', 'Starts with', 'Created', 'Last used']}
        actions
        empty="No API tokens yet."
        hint="Create one above for PicGo, ShareX, Flameshot or curl; it is shown once."
        row={(token) => (
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
                work={() => call(api.DELETE('/api/v1/tokens/{id}', byId(token.id)))}
                done={`Token ${token.name} revoked`}
              >
                Revoke<span class="visually-hidden"> {token.name}</span>
              </ActionButton>
            </td>
          </tr>
        )}
      />
    </Page>
  );
}

/** The PicGo, ShareX, Flameshot and curl configurations of a new token. */
function UploaderConfigs({ token, origin }: { token: string; origin: string }) {
  const sxcu = sharexFile(token, origin, useSite()?.name);
  const href = `data:application/json;charset=utf-8,${encodeURIComponent(sxcu.text)}`;
  return (
    <>
      <label for="picgo-config">PicGo configuration (web-uploader plugin)</label>
      <p class="hint">
        Over {formatBytes(DIRECT_UPLOAD_LIMIT)}, PicGo's web-uploader shows its "upload failed" notification
        and still ends with an empty link: the plugin never fails the upload itself.
      </p>
      <textarea id="picgo-config" readOnly rows={14} value={picgoConfig(token, origin)} />
      <p>
        ShareX:{' '}
        <a href={href} download={sxcu.name}>
          download {sxcu.name}
        </a>{' '}
        and open it (ShareX adds it as a custom uploader).
      </p>
      <label for="flameshot-command">Flameshot (a capture uploaded, its link printed and copied)</label>
      <textarea id="flameshot-command" readOnly rows={3} value={flameshotCommand(token, origin)} />
      <label for="curl-command">curl, or any uploader that posts a form</label>
      <textarea id="curl-command" readOnly rows={3} value={curlCommand(token, origin)} />
      <label for="curl-delete-command">Deleting a file by its id (clients that sync deletions do this)</label>
      <textarea id="curl-delete-command" readOnly rows={2} value={curlDeleteCommand(token, origin)} />
    </>
  );
}
