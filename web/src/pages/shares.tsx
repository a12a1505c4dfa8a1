// Share links (docs/DESIGN.md 16): the page of the caller's links (copy, views, revoke); the form that makes
// one is share-form.tsx.
import { ActionButton, useAction } from '../action.tsx';
import { api, byId, call, FIRST_100 } from '../api/client.ts';
import { formatTime, ListTable, Page, useLoad } from '../ui.tsx';

export function SharesPage() {
  const shares = useLoad(() => call(api.GET('/api/v1/shares', FIRST_100)));
  const action = useAction(shares.reload);
  return (
    <Page title="Share links">
      <p>
        Links to your files and albums that work without an account, until they expire, run out of views or
        you revoke them. Visitors see the images through the link itself, so they stop with it; a file's own
        link (Copy under My files) is unlisted but permanent. Share an album from its page under Albums.
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
          // What it shares, by name (null: the file or album is gone since).
          const what = `${share.album_id ? 'Album' : 'File'} ${share.name ?? '(deleted)'}`;
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
                <button type="button" class="secondary" onClick={() => action.copy(share.url, 'Link')}>
                  Copy<span class="visually-hidden"> the link to {what}</span>
                </button>
                <ActionButton
                  action={action}
                  work={() => call(api.DELETE('/api/v1/shares/{id}', byId(share.id)))}
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
