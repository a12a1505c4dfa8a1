// The back office's files moderation: every account's files in the files grid, each with its owner; a
// filter by owner (`#/admin/files?owner_id=…`, the API's `?owner_id=`), the lightbox's visibility and take
// down, and bulk make unlisted and take down; and one file found by its URL, key or id (`?ref=`).
import { useState } from 'preact/hooks';
import { api, call, type DataOf } from '../api/client.ts';
import { FileGrid } from '../file-grid.tsx';
import { navigate, routeParam, useRoute } from '../router.ts';
import { errorText, Page, usePages } from '../ui.tsx';

/** Owners seen on the pages loaded so far (id -> username), offered by the filter. */
const seenOwners = new Map<string, string>();

export function AdminFiles() {
  const ownerId = routeParam(useRoute(), 'owner_id');
  // Counts the pages loaded, so the filter offers the owners they named.
  const [, setLoaded] = useState(0);
  return (
    <Page title="Files moderation">
      <FindFile />
      <OwnerFilter ownerId={ownerId} />
      <ModerationGrid
        key={ownerId ?? ''}
        ownerId={ownerId}
        onLoaded={() => setLoaded((count) => count + 1)}
      />
    </Page>
  );
}

type Found = DataOf<'/api/v1/admin/files/find', 'get'>;

/** A file found by its URL (original, rendition or share link), its key or its id, in a grid of its own. */
function FindFile() {
  const [typed, setTyped] = useState('');
  const [found, setFound] = useState<{ ref: string; file?: Found; error: string } | undefined>();
  const find = async (ref: string) => {
    try {
      const file = await call(api.GET('/api/v1/admin/files/find', { params: { query: { ref } } }));
      setFound({ ref, file, error: '' });
    } catch (caught) {
      setFound({ ref, error: errorText(caught) });
    }
  };
  return (
    <>
      <form
        class="inline"
        aria-label="Find a file"
        onSubmit={(event) => {
          event.preventDefault();
          if (typed.trim()) void find(typed.trim());
        }}
      >
        <div class="field">
          <label for="find-ref">Find a file by its URL, key or id</label>
          <input
            id="find-ref"
            maxLength={2048}
            value={typed}
            onInput={(event) => setTyped((event.target as HTMLInputElement).value)}
          />
        </div>
        <button type="submit" class="secondary">
          Find
        </button>
      </form>
      {found && (
        <FileGrid
          list={{
            data: found,
            error: found.error,
            items: found.file ? [found.file] : [],
            refresh: () => void find(found.ref),
          }}
          label="Found"
          mode="admin"
          empty="No file found."
          onOwner={(id) => filterBy(id)}
        />
      )}
    </>
  );
}

const filterBy = (ownerId: string | undefined) =>
  navigate(ownerId ? `/admin/files?owner_id=${encodeURIComponent(ownerId)}` : '/admin/files');

function OwnerFilter({ ownerId }: { ownerId: string | undefined }) {
  const [typed, setTyped] = useState('');
  const owners = [...seenOwners].sort((a, b) => a[1].localeCompare(b[1]));
  return (
    <form
      class="inline owner-filter"
      onSubmit={(event) => {
        event.preventDefault();
        filterBy(typed.trim() || undefined);
        setTyped('');
      }}
    >
      <div class="field">
        <label for="owner-filter">Filter by owner</label>
        <select
          id="owner-filter"
          value={ownerId ?? ''}
          onChange={(event) => filterBy((event.target as HTMLSelectElement).value || undefined)}
        >
          <option value="">All owners</option>
          {ownerId && !seenOwners.has(ownerId) && <option value={ownerId}>{ownerId}</option>}
          {owners.map(([id, username]) => (
            <option key={id} value={id}>
              {username}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="owner-id">Or an account id</label>
        <input
          id="owner-id"
          maxLength={128}
          value={typed}
          onInput={(event) => setTyped((event.target as HTMLInputElement).value)}
        />
      </div>
      <button type="submit" class="secondary">
        Filter
      </button>
      {ownerId && (
        <button type="button" class="link" onClick={() => filterBy(undefined)}>
          Clear filter
        </button>
      )}
    </form>
  );
}

function ModerationGrid({ ownerId, onLoaded }: { ownerId: string | undefined; onLoaded: () => void }) {
  const files = usePages(async (cursor) => {
    const page = await call(
      api.GET('/api/v1/admin/files', {
        params: {
          query: { limit: '60', ...(ownerId ? { owner_id: ownerId } : {}), ...(cursor ? { cursor } : {}) },
        },
      }),
    );
    for (const item of page.items) {
      if (item.owner_username) seenOwners.set(item.owner_id, item.owner_username);
    }
    onLoaded();
    return page;
  });
  const owner = ownerId && seenOwners.get(ownerId);
  return (
    <FileGrid
      list={files}
      label={ownerId ? `Files of ${owner ?? ownerId}` : 'All files'}
      mode="admin"
      empty={ownerId ? 'This owner has no files.' : 'No files.'}
      onOwner={(id) => filterBy(id)}
    />
  );
}
