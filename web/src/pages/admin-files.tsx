// The back office's files moderation: every account's files, each with the owner's own controls
// (permission, delete) acting through the administrator's API.
import { useState } from 'preact/hooks';
import { api, call } from '../api/client.ts';
import { FormError, Page, useLoad } from '../ui.tsx';
import { FileCard } from './files.tsx';

export function AdminFiles() {
  const [version, setVersion] = useState(0);
  const files = useLoad(
    () => call(api.GET('/api/v1/admin/files', { params: { query: { limit: '60' } } })),
    [version],
  );
  return (
    <Page title="Files moderation">
      {files.error && <FormError message={files.error} />}
      {files.data && files.data.items.length === 0 && <p>No files.</p>}
      <ul class="grid" aria-label="All files">
        {files.data?.items.map((file) => (
          <FileCard key={file.id} file={file} admin onChange={() => setVersion((value) => value + 1)} />
        ))}
      </ul>
    </Page>
  );
}
