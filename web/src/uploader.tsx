// The uploader: file picker, drag and drop and paste, each file's progress (My files and an album's page).
import { useEffect, useState } from 'preact/hooks';
import { uploadFile } from './api/upload.ts';
import { errorText } from './ui.tsx';

interface Transfer {
  id: number;
  name: string;
  progress: number;
  state: 'uploading' | 'done' | 'failed';
  message: string;
}

let nextTransferId = 1;

export function Uploader({ onUploaded, albumId }: { onUploaded: () => void; albumId?: string }) {
  const [transfers, setTransfers] = useState<Transfer[]>([]);
  const [dragging, setDragging] = useState(false);

  const update = (id: number, change: Partial<Transfer>) =>
    setTransfers((list) => list.map((item) => (item.id === id ? { ...item, ...change } : item)));

  const start = (files: File[]) => {
    for (const file of files) {
      const id = nextTransferId++;
      setTransfers((list) => [
        { id, name: file.name, progress: 0, state: 'uploading', message: '' },
        ...list,
      ]);
      uploadFile(file, (progress) => update(id, { progress }), albumId)
        .then(() => {
          update(id, { progress: 1, state: 'done', message: 'Uploaded' });
          onUploaded();
        })
        .catch((error: unknown) => update(id, { state: 'failed', message: errorText(error) }));
    }
  };

  // Paste anywhere on the page uploads the pasted files (a screenshot from the clipboard, say).
  useEffect(() => {
    const onPaste = (event: ClipboardEvent) => {
      const files = [...(event.clipboardData?.files ?? [])];
      if (files.length === 0) return;
      event.preventDefault();
      start(files);
    };
    addEventListener('paste', onPaste);
    return () => removeEventListener('paste', onPaste);
  });

  return (
    <div>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: a drop target for the mouse; the keyboard and screen readers use the file picker inside it, or paste */}
      <div
        class={`dropzone${dragging ? ' dragging' : ''}`}
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(event) => {
          event.preventDefault();
          setDragging(false);
          start([...(event.dataTransfer?.files ?? [])]);
        }}
      >
        <p>Drop files here, paste them, or</p>
        <label class="button" for="file-picker">
          Choose files
        </label>
        <input
          id="file-picker"
          class="visually-hidden"
          type="file"
          multiple
          onChange={(event) => {
            const input = event.target as HTMLInputElement;
            start([...(input.files ?? [])]);
            input.value = '';
          }}
        />
      </div>
      {transfers.length > 0 && (
        <ul class="transfers" aria-label="Uploads">
          {transfers.map((transfer) => (
            <li key={transfer.id} class={transfer.state}>
              <span class="name">{transfer.name}</span>
              <progress
                max={100}
                value={Math.round(transfer.progress * 100)}
                aria-label={`Upload of ${transfer.name}`}
              />
              <span role={transfer.state === 'failed' ? 'alert' : 'status'}>
                {transfer.state === 'uploading'
                  ? `${Math.round(transfer.progress * 100)}%`
                  : transfer.message}
              </span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
