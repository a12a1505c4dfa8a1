// Share links (docs/DESIGN.md 16): a form that shares a file or an album with an optional password, expiry
// and view limit, and the page of the caller's links (copy, views, revoke).
import { useId, useState } from 'preact/hooks';
import { ActionButton, useAction } from '../action.tsx';
import { api, call, type DataOf } from '../api/client.ts';
import { copyText, formatTime, ListTable, Page, useLoad } from '../ui.tsx';

type Share = DataOf<'/api/v1/shares', 'post', 201>;

/** A share's options, then its link to copy; `target` says what is shared. */
export function ShareForm({
  target,
  label,
  level = 2,
}: {
  target: { album_id: string } | { file_id: string };
  label: string;
  /** The heading's level where the form sits (a card's is under its file's h3). */
  level?: 2 | 4;
}) {
  const Heading = level === 2 ? 'h2' : 'h4';
  const id = useId();
  const [password, setPassword] = useState('');
  const [expires, setExpires] = useState('');
  const [maxViews, setMaxViews] = useState('');
  const [created, setCreated] = useState<Share | null>(null);
  const [busy, setBusy] = useState(false);
  const action = useAction(() => undefined);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    await action.run(async () => {
      const share = await call(
        api.POST('/api/v1/shares', {
          body: {
            ...target,
            ...(password ? { password } : {}),
            ...(expires ? { expires_at: new Date(expires).toISOString() } : {}),
            ...(maxViews ? { max_views: Number(maxViews) } : {}),
          },
        }),
      );
      setCreated(share);
      setPassword('');
    }, 'Share link created');
    setBusy(false);
  };

  return (
    <section class="share-form" aria-labelledby={`${id}-title`}>
      <Heading id={`${id}-title`}>{label}</Heading>
      <form onSubmit={submit} noValidate>
        <div class="field">
          <label for={`${id}-password`}>Password (optional)</label>
          <input
            id={`${id}-password`}
            type="password"
            autoComplete="new-password"
            maxLength={128}
            value={password}
            onInput={(event) => setPassword((event.target as HTMLInputElement).value)}
          />
        </div>
        <div class="field">
          <label for={`${id}-expires`}>Expires (optional)</label>
          <input
            id={`${id}-expires`}
            type="datetime-local"
            value={expires}
            onInput={(event) => setExpires((event.target as HTMLInputElement).value)}
          />
        </div>
        <div class="field">
          <label for={`${id}-views`}>View limit (optional)</label>
          <input
            id={`${id}-views`}
            type="number"
            min={1}
            inputMode="numeric"
            value={maxViews}
            onInput={(event) => setMaxViews((event.target as HTMLInputElement).value)}
          />
        </div>
        <button type="submit" disabled={busy}>
          Create share link
        </button>
      </form>
      {action.view}
      {created && <ShareLink share={created} />}
    </section>
  );
}

/** A share's link, selectable, with a copy button. */
function ShareLink({ share }: { share: Share }) {
  const action = useAction(() => undefined);
  return (
    <div class="field">
      <label for={`share-link-${share.id}`}>Share link</label>
      <input
        id={`share-link-${share.id}`}
        class="link-text"
        readOnly
        value={share.url}
        onFocus={(event) => (event.target as HTMLInputElement).select()}
      />
      <button
        type="button"
        onClick={async () =>
          action.say((await copyText(share.url)) ? 'Link copied' : 'Select the link and copy it')
        }
      >
        Copy link
      </button>
      {action.view}
    </div>
  );
}

export function SharesPage() {
  const shares = useLoad(() => call(api.GET('/api/v1/shares', { params: { query: { limit: '100' } } })));
  const albums = useLoad(() => call(api.GET('/api/v1/albums', { params: { query: { limit: '100' } } })));
  const action = useAction(shares.reload);
  const albumName = (id: string | null) => albums.data?.items.find((album) => album.id === id)?.name;
  return (
    <Page title="Share links">
      <p>
        Links to your files and albums that work without an account, until they expire, run out of views or
        you revoke them. Share an album from its page under Albums.
      </p>
      {action.view}
      <ListTable
        list={shares}
        items={shares.data?.items}
        columns={['Link', 'Shares', 'Password', 'Views', 'Expires']}
        actions
        empty="No share links."
        hint="Share a file from My files, or an album from its page under Albums."
        row={(share) => {
          const what = share.album_id ? `Album ${albumName(share.album_id) ?? ''}`.trim() : 'A file';
          return (
            <tr key={share.id}>
              <td>
                <a href={share.url}>{share.url}</a>
              </td>
              <td>{what}</td>
              <td>{share.has_password ? 'Yes' : 'No'}</td>
              <td>
                {share.views}
                {share.max_views === null ? '' : ` of ${share.max_views}`}
              </td>
              <td>{share.expires_at ? formatTime(share.expires_at) : 'Never'}</td>
              <td>
                <button
                  type="button"
                  class="secondary"
                  onClick={async () =>
                    action.say((await copyText(share.url)) ? 'Link copied' : 'Select the link and copy it')
                  }
                >
                  Copy<span class="visually-hidden"> the link to {what}</span>
                </button>
                <ActionButton
                  action={action}
                  work={() => call(api.DELETE('/api/v1/shares/{id}', { params: { path: { id: share.id } } }))}
                  done="Share link revoked"
                >
                  Revoke<span class="visually-hidden"> the link to {what}</span>
                </ActionButton>
              </td>
            </tr>
          );
        }}
      />
    </Page>
  );
}
