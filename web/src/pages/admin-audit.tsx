// The back office's audit log: administrators' actions (reviews, takedowns, block list removals), newest
// first: who, what, on what, from where, when.

import { api, call } from '../api/client.ts';
import { formatTime, ListTable, Page, usePages } from '../ui.tsx';

/** An event's details as `name: value` pairs (long values wrap in their cell). */
const detailsText = (details: Record<string, unknown>) =>
  Object.entries(details)
    .map(([name, value]) => `${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');

export function AdminAudit() {
  const list = usePages((cursor) =>
    call(
      api.GET('/api/v1/admin/audit', { params: { query: { limit: '50', ...(cursor ? { cursor } : {}) } } }),
    ),
  );
  return (
    <Page title="Audit log">
      <ListTable
        list={list}
        items={list.data && list.items}
        columns={['When', 'Who', 'Action', 'On', 'From', 'Details']}
        empty="No administrator actions yet."
        row={(event) => (
          <tr key={event.id}>
            <td>{formatTime(event.at)}</td>
            <td>{event.actor_id}</td>
            <td>{event.action}</td>
            <td class="wrap">{event.target}</td>
            <td>{event.from}</td>
            <td class="wrap">{detailsText(event.details)}</td>
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
