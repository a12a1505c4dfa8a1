// The back office's block list (docs/MODERATION.md "The block list"): taken-down images' perceptual hashes,
// newest first, each removable (its likeness may then be uploaded again).
import { ActionButton, useAction } from '../action.tsx';
import { api, byId, call } from '../api/client.ts';
import { formatTime, ListTable, Page, usePages } from '../ui.tsx';

export function AdminBlocklist() {
  const list = usePages((cursor) =>
    call(
      api.GET('/api/v1/admin/blocklist', {
        params: { query: { limit: '50', ...(cursor ? { cursor } : {}) } },
      }),
    ),
  );
  const action = useAction(list.refresh);
  return (
    <Page title="Block list">
      <p>
        A takedown lists the image's likeness: an upload that looks like it (resized, recompressed or
        stripped) is refused. Remove an entry to let its likeness be uploaded again.
      </p>
      {action.view}
      <ListTable
        list={list}
        items={list.data && list.items}
        columns={['Likeness (hash)', 'File', 'Owner', 'Listed', 'By']}
        actions
        empty="The block list is empty."
        hint="Taking a file down from the review queue lists its likeness."
        row={(entry) => (
          <tr key={entry.id}>
            <td>
              <code>{entry.hash}</code>
            </td>
            <td class="wrap">{entry.file_id}</td>
            <td class="wrap">{entry.owner_id}</td>
            <td>{formatTime(entry.created_at)}</td>
            <td>{entry.created_by}</td>
            <td>
              <ActionButton
                action={action}
                work={() => call(api.DELETE('/api/v1/admin/blocklist/{id}', byId(entry.id)))}
                done={`Entry ${entry.hash} removed: its likeness may be uploaded again`}
              >
                Remove<span class="visually-hidden"> {entry.hash}</span>
              </ActionButton>
            </td>
          </tr>
        )}
      />
      {list.more && (
        <button type="button" class="secondary" onClick={list.more}>
          Load more
        </button>
      )}
    </Page>
  );
}
