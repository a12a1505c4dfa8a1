// The back office's audit log (docs/ACCOUNTS.md "Audit log"): every administrator action, newest first: who,
// what, on what, from where, when, and how it ended; narrowed by administrator, action (`bans.` for all of
// a kind) or target, kept in the route (`#/admin/audit?action=bans.`) so a filtered view can be linked.
import { useState } from 'preact/hooks';
import { api, call } from '../api/client.ts';
import { navigate, routeParam, useRoute } from '../router.ts';
import { formatTime, ListTable, Page, usePages } from '../ui.tsx';

/** An event's details as `name: value` pairs (long values wrap in their cell). */
const detailsText = (details: Record<string, unknown>) =>
  Object.entries(details)
    .map(([name, value]) => `${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(', ');

const FILTERS = [
  ['actor_id', 'Administrator (account id)'],
  ['action', 'Action (e.g. bans.create, or bans. for all)'],
  ['target', 'On (e.g. accounts:<id>)'],
] as const;
type FilterName = (typeof FILTERS)[number][0];
type Filter = Partial<Record<FilterName, string>>;

function filterOf(path: string): Filter {
  const filter: Filter = {};
  for (const [name] of FILTERS) {
    const value = routeParam(path, name);
    if (value) filter[name] = value;
  }
  return filter;
}

function show(filter: Filter) {
  const query = new URLSearchParams(
    Object.entries(filter).filter((entry): entry is [string, string] => Boolean(entry[1])),
  ).toString();
  navigate(query ? `/admin/audit?${query}` : '/admin/audit');
}

function AuditFilter({ filter }: { filter: Filter }) {
  const [typed, setTyped] = useState<Filter>(filter);
  return (
    <form
      class="inline"
      aria-label="Filter the audit log"
      onSubmit={(event) => {
        event.preventDefault();
        show(Object.fromEntries(Object.entries(typed).map(([name, value]) => [name, value?.trim()])));
      }}
    >
      {FILTERS.map(([name, label]) => (
        <div class="field" key={name}>
          <label for={`audit-${name}`}>{label}</label>
          <input
            id={`audit-${name}`}
            maxLength={200}
            value={typed[name] ?? ''}
            onInput={(event) => setTyped({ ...typed, [name]: (event.target as HTMLInputElement).value })}
          />
        </div>
      ))}
      <button type="submit" class="secondary">
        Filter
      </button>
      {Object.keys(filter).length > 0 && (
        <button type="button" class="link" onClick={() => show({})}>
          Clear filter
        </button>
      )}
    </form>
  );
}

function AuditList({ filter }: { filter: Filter }) {
  const list = usePages((cursor) =>
    call(
      api.GET('/api/v1/admin/audit', {
        params: { query: { limit: '50', ...filter, ...(cursor ? { cursor } : {}) } },
      }),
    ),
  );
  return (
    <>
      <ListTable
        list={list}
        items={list.data && list.items}
        columns={['When', 'Who', 'Action', 'On', 'From', 'Outcome', 'Details']}
        empty="No administrator actions here yet."
        row={(event) => (
          <tr key={event.id}>
            <td>{formatTime(event.at)}</td>
            <td>
              <button
                type="button"
                class="link"
                onClick={() => show({ ...filter, actor_id: event.actor_id })}
              >
                {event.actor_id}
              </button>
            </td>
            <td>{event.action}</td>
            <td class="wrap">{event.target}</td>
            <td>{event.from}</td>
            <td>{event.status === undefined ? 'unfinished' : String(event.status)}</td>
            <td class="wrap">{detailsText(event.details)}</td>
          </tr>
        )}
      />
      {list.more && (
        <button type="button" class="secondary" onClick={list.more}>
          Load more
        </button>
      )}
    </>
  );
}

export function AdminAudit() {
  const path = useRoute();
  const filter = filterOf(path);
  return (
    <Page title="Audit log">
      <AuditFilter key={path} filter={filter} />
      <AuditList key={path} filter={filter} />
    </Page>
  );
}
