// The files grid of My files, an album, the gallery and moderation: dense thumbnail tiles (the name on
// hover or focus), a tap or Enter opens the lightbox, a corner checkbox selects, and the selection's bar of
// bulk actions (selection-bar.tsx), saying what came of them.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { describeOutcome, runBulk } from './bulk.ts';
import { FIRST_ROW, type GridFile, isHeld, Thumbnail } from './file-links.tsx';
import { type AlbumChoice, type GridMode, Lightbox } from './lightbox.tsx';
import { SelectionBar } from './selection-bar.tsx';
import { CardGrid, copyText, errorText, FormError, Status } from './ui.tsx';

export type { AlbumChoice, GridMode } from './lightbox.tsx';

/** A `usePages` list (ui.tsx). */
export interface FileList<T extends GridFile> {
  data?: unknown;
  error: string;
  items: T[];
  more?: (() => void) | undefined;
  refresh: () => void;
}

const tileId = (id: string) => `tile-${id}`;

export function FileGrid<T extends GridFile>({
  list,
  label,
  mode,
  empty,
  hint,
  albums,
  onChanged = list.refresh,
  onOwner,
}: {
  list: FileList<T>;
  label: string;
  mode: GridMode;
  empty: string;
  hint?: ComponentChildren;
  /** The caller's albums: the lightbox and the bulk bar then move files into one, or out of theirs. */
  albums?: AlbumChoice[] | undefined;
  onChanged?: () => unknown;
  /** Moderation: show only this owner's files. */
  onOwner?: (ownerId: string) => void;
}) {
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [openId, setOpenId] = useState<string | null>(null);
  const [status, setStatus] = useState({ message: '', error: '' });
  const items = list.items;
  const selectable = mode !== 'gallery';
  const chosen = items.filter((file) => selected.has(file.id));
  const openIndex = openId === null ? -1 : items.findIndex((file) => file.id === openId);
  // A file that left the list (moved out of this album, deleted elsewhere) closes its lightbox for good.
  useEffect(() => {
    if (openId !== null && openIndex < 0) setOpenId(null);
  }, [openId, openIndex]);

  const toggle = (id: string, on: boolean) =>
    setSelected((current) => {
      const next = new Set(current);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const close = () => {
    const id = openId;
    setOpenId(null);
    // Focus goes back to the tile the lightbox was opened from.
    if (id) requestAnimationFrame(() => document.getElementById(tileId(id))?.focus());
  };
  const bulk = async (work: (file: T) => Promise<unknown>, verb: string) => {
    setStatus({ message: '', error: '' });
    const outcome = await runBulk(chosen, work);
    setSelected(new Set(outcome.failures.map((failure) => failure.file.id)));
    setStatus(describeOutcome(outcome, verb, errorText));
    await onChanged();
  };

  return (
    <div class={chosen.length > 0 ? 'file-grid-wrap selecting' : 'file-grid-wrap'}>
      {selectable && items.length > 0 && (
        <SelectAll
          count={items.length}
          chosen={chosen.length}
          onChange={(on) => setSelected(new Set(on ? items.map((file) => file.id) : []))}
        />
      )}
      {selectable && chosen.length > 0 && (
        <SelectionBar
          count={chosen.length}
          mode={mode}
          albums={albums}
          onBulk={bulk}
          onClear={() => setSelected(new Set())}
        />
      )}
      {status.message && <Status message={status.message} />}
      {status.error && <FormError message={status.error} />}
      <CardGrid list={list} label={label} empty={empty} hint={hint} className="file-grid">
        {(file, index) => (
          <li key={file.id} class={`tile${selected.has(file.id) ? ' selected' : ''}`}>
            <button
              type="button"
              id={tileId(file.id)}
              class="tile-open"
              aria-haspopup="dialog"
              onClick={() => setOpenId(file.id)}
            >
              <Thumbnail file={file} firstRow={index < FIRST_ROW} />
              <span class="tile-name" aria-hidden="true">
                {file.original_name}
              </span>
            </button>
            {isHeld(file) && <span class="badge badge-held">Held for review</span>}
            {selectable && (
              <label class="tile-check">
                <input
                  type="checkbox"
                  checked={selected.has(file.id)}
                  aria-label={`Select ${file.original_name}`}
                  onChange={(event) => toggle(file.id, (event.target as HTMLInputElement).checked)}
                />
              </label>
            )}
            <div class="tile-actions">
              <button
                type="button"
                class="tile-action"
                onClick={async () =>
                  setStatus({
                    message: (await copyText(file.url))
                      ? `Link of ${file.original_name} copied`
                      : `Open ${file.original_name} to select its link and copy it`,
                    error: '',
                  })
                }
              >
                Copy link<span class="visually-hidden"> of {file.original_name}</span>
              </button>
            </div>
            {mode === 'admin' && file.owner_id && (
              <p class="tile-owner">
                {onOwner ? (
                  <button type="button" class="link" onClick={() => onOwner(file.owner_id!)}>
                    <span class="visually-hidden">Show only files of </span>
                    {file.owner_username ?? file.owner_id}
                  </button>
                ) : (
                  (file.owner_username ?? file.owner_id)
                )}
              </p>
            )}
          </li>
        )}
      </CardGrid>
      {openIndex >= 0 && (
        <Lightbox
          files={items}
          index={openIndex}
          mode={mode}
          albums={albums}
          onIndex={(index) => setOpenId(items[index]?.id ?? null)}
          onClose={close}
          onChanged={onChanged}
          onRemoved={(message) => {
            setOpenId(null);
            setStatus({ message, error: '' });
          }}
          onOwner={
            onOwner &&
            ((ownerId) => {
              setOpenId(null);
              onOwner(ownerId);
            })
          }
        />
      )}
    </div>
  );
}

function SelectAll({
  count,
  chosen,
  onChange,
}: {
  count: number;
  chosen: number;
  onChange: (on: boolean) => void;
}) {
  const box = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (box.current) box.current.indeterminate = chosen > 0 && chosen < count;
  }, [chosen, count]);
  return (
    <label class="check select-all">
      <input
        ref={box}
        type="checkbox"
        checked={chosen === count}
        onChange={(event) => onChange((event.target as HTMLInputElement).checked)}
      />
      Select all on this page
    </label>
  );
}
