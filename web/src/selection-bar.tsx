// The files grid's selection bar: how many files are selected, and what can be done to all of them at once
// (the owner's: make unlisted or public, move into an album or out, delete; moderation's: make unlisted,
// take down), each through the per-file API a few at a time (bulk.ts), deletions confirmed by count.
import { useId, useState } from 'preact/hooks';
import { api, byId, call } from './api/client.ts';
import { type GridFile, PERMISSION_HINT } from './file-links.tsx';
import type { AlbumChoice, GridMode } from './lightbox.tsx';

/** The bar over a selection: how many, and what can be done to all of them at once. */
export function SelectionBar<T extends GridFile>({
  count,
  mode,
  albums,
  onBulk,
  onClear,
}: {
  count: number;
  mode: GridMode;
  albums?: AlbumChoice[] | undefined;
  onBulk: (work: (file: T) => Promise<unknown>, verb: string) => Promise<void>;
  onClear: () => void;
}) {
  const id = useId();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [album, setAlbum] = useState('');
  const admin = mode === 'admin';
  const run = async (work: (file: T) => Promise<unknown>, verb: string) => {
    setBusy(true);
    setConfirming(false);
    await onBulk(work, verb);
    setBusy(false);
  };
  const path = admin ? '/api/v1/admin/files/{id}' : '/api/v1/files/{id}';
  const setPermission = (permission: 'private' | 'public') =>
    run((file) => call(api.PATCH(path, { ...byId(file.id), body: { permission } })), 'updated');
  const remove = () => run((file) => call(api.DELETE(path, byId(file.id))), admin ? 'taken down' : 'deleted');
  const move = () =>
    run(
      (file) =>
        call(api.PATCH('/api/v1/files/{id}', { ...byId(file.id), body: { album_id: album || null } })),
      'moved',
    );
  const files = count === 1 ? '1 file' : `${count} files`;

  return (
    <section class="selection-bar" aria-label="Selection" aria-busy={busy}>
      <p class="selection-count" role="status">
        {count} selected
      </p>
      <div class="actions">
        <button type="button" class="secondary" disabled={busy} onClick={() => setPermission('private')}>
          Make unlisted
        </button>
        {!admin && (
          <button type="button" class="secondary" disabled={busy} onClick={() => setPermission('public')}>
            Make public
          </button>
        )}
        {!admin && albums && (
          <span class="bulk-move">
            <label for={`${id}-album`} class="visually-hidden">
              Move to album
            </label>
            <select
              id={`${id}-album`}
              value={album}
              onChange={(event) => setAlbum((event.target as HTMLSelectElement).value)}
            >
              <option value="">No album (take out)</option>
              {albums.map((choice) => (
                <option key={choice.id} value={choice.id}>
                  {choice.name}
                </option>
              ))}
            </select>
            <button type="button" class="secondary" disabled={busy} onClick={move}>
              Move
            </button>
          </span>
        )}
        {confirming ? (
          <>
            <button type="button" class="danger" disabled={busy} onClick={remove}>
              {admin ? `Take down ${files} for good` : `Move ${files} to the trash`}
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </>
        ) : (
          <button type="button" class="secondary" disabled={busy} onClick={() => setConfirming(true)}>
            {admin ? 'Take down…' : 'Delete…'}
          </button>
        )}
        <button type="button" class="link" onClick={onClear}>
          Clear selection
        </button>
      </div>
      <p class="hint">{PERMISSION_HINT}</p>
    </section>
  );
}
