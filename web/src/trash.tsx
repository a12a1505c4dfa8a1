// My files' Trash (docs/UPLOADS.md "Trash"): deleted files wait there (served nowhere, still counted in the
// usage) until restored, deleted for good, or purged after files.trash_days.
import { ActionButton, useAction } from './action.tsx';
import { api, byId, call } from './api/client.ts';
import { formatTime, ListTable, useLoad } from './ui.tsx';

/** `version`: the files list's; the trash is read again whenever the list is (a delete moves files here). */
export function Trash({ version, onRestored }: { version: number; onRestored: () => unknown }) {
  const trash = useLoad(
    () => call(api.GET('/api/v1/files/trash', { params: { query: { limit: '100' } } })),
    [version],
  );
  const action = useAction(() => trash.reload());
  const items = trash.data?.items;
  return (
    <section aria-labelledby="trash-title">
      <h2 id="trash-title">Trash</h2>
      {action.view}
      <ListTable
        list={trash}
        items={items}
        columns={['Name', 'Deleted', 'Deleted for good after']}
        actions
        empty="The trash is empty."
        hint="Deleted files wait here, still counted in your usage, until restored or deleted for good."
        row={(file) => (
          <tr key={file.id}>
            <td>{file.original_name}</td>
            <td>{formatTime(file.trashed_at)}</td>
            <td>{formatTime(file.purge_at)}</td>
            <td>
              <ActionButton
                action={action}
                work={() => call(api.POST('/api/v1/files/{id}/restore', byId(file.id))).then(onRestored)}
                done={`${file.original_name} restored`}
              >
                Restore<span class="visually-hidden"> {file.original_name}</span>
              </ActionButton>
              <ActionButton
                action={action}
                work={() => call(api.DELETE('/api/v1/files/trash/{id}', byId(file.id)))}
                done={`${file.original_name} deleted for good`}
              >
                Delete for good<span class="visually-hidden"> {file.original_name}</span>
              </ActionButton>
            </td>
          </tr>
        )}
      />
      {items && items.length > 0 && (
        <ActionButton
          action={action}
          work={() => call(api.DELETE('/api/v1/files/trash'))}
          done="The trash is emptied"
        >
          Empty the trash
        </ActionButton>
      )}
    </section>
  );
}
