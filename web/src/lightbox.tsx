// The files grid's lightbox: a modal dialog (focus held inside, Escape closes) with a larger rendition, the
// file's facts, its link in four formats, previous and next (buttons and arrow keys), and for the owner or
// an administrator the file's controls (visibility, album, share, delete or take down).
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { useAction } from './action.tsx';
import { api, call } from './api/client.ts';
import { session } from './api/session.ts';
import {
  type GridFile,
  isHeld,
  LargePicture,
  LINK_FORMATS,
  type LinkFormat,
  PERMISSION_HINT,
  PERMISSION_LABELS,
} from './file-links.tsx';
import { ShareForm } from './share-form.tsx';
import { TagEditor } from './tag-editor.tsx';
import { copyText, formatBytes, formatTime } from './ui.tsx';

/** Whose grid: the owner's (every control), the back office's (owner, visibility, take down), the gallery's. */
export type GridMode = 'owner' | 'admin' | 'gallery';

/** An album a file can be moved into (the caller's). */
export interface AlbumChoice {
  id: string;
  name: string;
}

export interface LightboxProps {
  files: GridFile[];
  index: number;
  mode: GridMode;
  albums?: AlbumChoice[] | undefined;
  onIndex: (index: number) => void;
  onClose: () => void;
  /** After a change to the file: the grid reloads. */
  onChanged: () => unknown;
  /** After the file was deleted: the grid closes the lightbox and says so. */
  onRemoved: (message: string) => void;
  /** The back office: show only this owner's files. */
  onOwner?: ((ownerId: string) => void) | undefined;
}

/** Where the arrow keys are the control's own (a select's options, a text's caret). */
const EDITABLE = new Set(['INPUT', 'SELECT', 'TEXTAREA']);

export function Lightbox({ files, index, mode, onIndex, onClose, onOwner, ...rest }: LightboxProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const file = files[index]!;
  useEffect(() => {
    const shown = dialog.current;
    if (shown && !shown.open) shown.showModal();
    // A modal dialog makes the rest of the page inert, the login dialog of an ended session included.
    const unsubscribe = session.subscribe(() => {
      if (session.expired()) onClose();
    });
    return () => {
      unsubscribe();
      shown?.close();
    };
  }, []);
  const go = (step: number) => onIndex((index + step + files.length) % files.length);
  const onKeyDown = (event: KeyboardEvent) => {
    if (EDITABLE.has((event.target as HTMLElement).tagName)) return;
    if (event.key === 'ArrowRight' || event.key === 'ArrowLeft') {
      event.preventDefault();
      go(event.key === 'ArrowRight' ? 1 : -1);
    }
  };
  const owner = file.owner_username ?? file.owner_id;

  return (
    <dialog
      ref={dialog}
      class="lightbox"
      aria-labelledby="lightbox-title"
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      onKeyDown={onKeyDown}
    >
      <div class="lightbox-head">
        <h2 id="lightbox-title">{file.original_name}</h2>
        <p class="meta" aria-live="polite">
          <span class="visually-hidden">{file.original_name}, </span>
          {index + 1} of {files.length}
        </p>
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      <div class="lightbox-body">
        <div class="lightbox-figure">
          <LargePicture key={file.id} file={file} />
          {files.length > 1 && (
            <div class="lightbox-nav">
              <button type="button" class="secondary" onClick={() => go(-1)}>
                ← Previous
              </button>
              <button type="button" class="secondary" onClick={() => go(1)}>
                Next →
              </button>
            </div>
          )}
        </div>
        <div class="lightbox-details">
          <p class="meta">
            {formatBytes(file.size)}
            {file.width ? ` · ${file.width}×${file.height}` : ''} · {formatTime(file.created_at)}
          </p>
          {isHeld(file) && (
            <p class="notice notice-warning">
              Held for review: its links answer 451 to everyone until a moderator approves it; only its owner
              and administrators see it here.
            </p>
          )}
          {mode === 'admin' && file.owner_id && (
            <p>
              Owner: <strong>{owner}</strong>{' '}
              {onOwner && (
                <button type="button" class="link" onClick={() => onOwner(file.owner_id!)}>
                  Show only {owner}'s files
                </button>
              )}
            </p>
          )}
          <p>
            <a href={file.url} target="_blank" rel="noopener">
              Open original
            </a>
            {mode === 'gallery' && (
              <>
                {' · '}
                <a href={`#/report?url=${encodeURIComponent(file.url)}`}>
                  Report<span class="visually-hidden"> {file.original_name}</span>
                </a>
              </>
            )}
          </p>
          <FileLinks key={`links-${file.id}`} file={file} />
          {mode !== 'gallery' && <FileControls key={file.id} file={file} mode={mode} {...rest} />}
        </div>
      </div>
    </dialog>
  );
}

/** The link in each format, each with its Copy button. */
function FileLinks({ file }: { file: GridFile }) {
  const id = useId();
  const [copied, setCopied] = useState('');
  const copy = async (format: LinkFormat) =>
    setCopied(
      (await copyText(LINK_FORMATS[format](file))) ? `${format} copied` : 'Select the link and copy it',
    );
  return (
    <div class="lightbox-links">
      <h3>Links</h3>
      {(Object.keys(LINK_FORMATS) as LinkFormat[]).map((format) => (
        <div class="link-row" key={format}>
          <label for={`${id}-${format}`}>{format}</label>
          <input
            id={`${id}-${format}`}
            class="link-text"
            readOnly
            value={LINK_FORMATS[format](file)}
            aria-label={`${format} link of ${file.original_name}`}
            onFocus={(event) => (event.target as HTMLInputElement).select()}
          />
          <button type="button" class="secondary" onClick={() => copy(format)}>
            Copy<span class="visually-hidden"> {format} link</span>
          </button>
        </div>
      ))}
      {copied && (
        <p class="status" role="status">
          {copied}
        </p>
      )}
      {file.thumbnail !== null && <RenditionLink file={file} />}
    </div>
  );
}

/** A signed link to a rendition of another width and format (POST /api/v1/files/{id}/rendition-url). */
function RenditionLink({ file }: { file: GridFile }) {
  const id = useId();
  const [url, setUrl] = useState('');
  const action = useAction(() => undefined);
  const submit = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const body = { w: Number(form.get('w')), f: form.get('f') as 'webp' | 'jpeg' | 'avif' };
    void action.run(async () => {
      const params = { path: { id: file.id } };
      setUrl((await call(api.POST('/api/v1/files/{id}/rendition-url', { params, body }))).url);
    });
  };
  return (
    <form class="link-row" onSubmit={submit}>
      <label for={`${id}-w`}>Rendition</label>
      <input id={`${id}-w`} name="w" type="number" defaultValue="640" aria-label="Width in pixels" />
      <select name="f" aria-label="Format">
        <option>webp</option>
        <option>jpeg</option>
        <option>avif</option>
      </select>
      <button type="submit" class="secondary">
        Get link
      </button>
      {url && <input class="link-text" readOnly value={url} aria-label="Signed rendition link" />}
      {action.view}
    </form>
  );
}

/** Visibility, album, share and delete for the owner; visibility and take down for an administrator. */
function FileControls({
  file,
  mode,
  albums,
  onChanged,
  onRemoved,
}: {
  file: GridFile;
  mode: 'owner' | 'admin';
} & Pick<LightboxProps, 'albums' | 'onChanged' | 'onRemoved'>) {
  const id = useId();
  const action = useAction(onChanged);
  const [confirming, setConfirming] = useState(false);
  const [sharing, setSharing] = useState(false);
  const admin = mode === 'admin';
  const path = admin ? '/api/v1/admin/files/{id}' : '/api/v1/files/{id}';
  const params = { path: { id: file.id } };
  const setPermission = (permission: 'private' | 'public') =>
    action.run(
      () => call(api.PATCH(path, { params, body: { permission } })),
      `Now ${PERMISSION_LABELS[permission].toLowerCase()}`,
    );
  const moveTo = (albumId: string) =>
    action.run(
      () => call(api.PATCH('/api/v1/files/{id}', { params, body: { album_id: albumId || null } })),
      albumId
        ? `Moved to ${albums?.find((album) => album.id === albumId)?.name ?? 'the album'}`
        : 'Taken out of its album',
    );
  const remove = () =>
    action.run(async () => {
      await call(api.DELETE(path, { params }));
      onRemoved(`${admin ? 'Taken down' : 'Deleted'}: ${file.original_name}`);
    });
  const verb = admin ? 'Take down' : 'Delete';

  return (
    <div class="lightbox-controls">
      <div class="field">
        <label for={`${id}-permission`}>Visibility</label>
        <select
          id={`${id}-permission`}
          aria-describedby={`${id}-permission-hint`}
          value={file.permission}
          onChange={(event) =>
            setPermission((event.target as HTMLSelectElement).value as 'private' | 'public')
          }
        >
          <option value="private">{PERMISSION_LABELS.private}</option>
          <option value="public">{PERMISSION_LABELS.public}</option>
        </select>
        <p class="hint" id={`${id}-permission-hint`}>
          {PERMISSION_HINT}
        </p>
      </div>
      {!admin && albums && (
        <div class="field">
          <label for={`${id}-album`}>Album</label>
          <select
            id={`${id}-album`}
            value={file.album_id ?? ''}
            onChange={(event) => moveTo((event.target as HTMLSelectElement).value)}
          >
            <option value="">No album</option>
            {albums.map((album) => (
              <option key={album.id} value={album.id}>
                {album.name}
              </option>
            ))}
          </select>
        </div>
      )}
      {!admin && <TagEditor file={file} onChanged={onChanged} />}
      {!admin && (
        // The form is drawn only while open: the dialog holds no hidden password field.
        <details
          class="share"
          onToggle={(event) => setSharing((event.currentTarget as HTMLDetailsElement).open)}
        >
          <summary>Share…</summary>
          {sharing && <ShareForm target={{ file_id: file.id }} label={`Share ${file.original_name}`} />}
        </details>
      )}
      <div class="actions">
        {confirming ? (
          <>
            <button type="button" class="danger" onClick={remove}>
              {admin ? `Take down ${file.original_name} for good` : `Move ${file.original_name} to the trash`}
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </>
        ) : (
          <button type="button" class="secondary" onClick={() => setConfirming(true)}>
            {verb}…
          </button>
        )}
      </div>
      {action.view}
    </div>
  );
}
