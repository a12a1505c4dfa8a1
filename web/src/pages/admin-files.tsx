// The back office's files moderation: every account's files, each with the owner's own controls
// (permission, delete) acting through the administrator's API.
import { api, call } from '../api/client.ts';
import { CardGrid, Page, usePages } from '../ui.tsx';
import { FileCard } from './files.tsx';

export function AdminFiles() {
  const files = usePages(() => call(api.GET('/api/v1/admin/files', { params: { query: { limit: '60' } } })));
  return (
    <Page title="Files moderation">
      <CardGrid list={{ ...files, more: undefined }} label="All files" empty="No files.">
        {(file) => <FileCard key={file.id} file={file} admin onChange={files.refresh} />}
      </CardGrid>
    </Page>
  );
}
