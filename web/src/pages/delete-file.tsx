// `#/files/<id>/delete`: the deletion URL of an uploader config (ShareX opens it in the browser, which
// cannot send the upload's token): the file named and shown, deleted after one confirmation.
import { useState } from 'preact/hooks';
import { api, byId, call } from '../api/client.ts';
import { Thumbnail } from '../file-links.tsx';
import { errorText, FormError, Page, Status, useLoad } from '../ui.tsx';

export function DeleteFilePage({ id }: { id: string }) {
  const file = useLoad(() => call(api.GET('/api/v1/files/{id}', byId(id))), [id]);
  const [deleted, setDeleted] = useState('');
  const [error, setError] = useState('');
  const remove = async (name: string) => {
    setError('');
    try {
      await call(api.DELETE('/api/v1/files/{id}', byId(id)));
      setDeleted(`Deleted: ${name}`);
    } catch (caught) {
      setError(errorText(caught));
    }
  };
  const name = file.data?.original_name ?? '';
  return (
    <Page title="Delete a file">
      {file.error && <FormError message={file.error} />}
      {deleted ? (
        <Status message={deleted} />
      ) : (
        file.data && (
          <div class="narrow">
            <Thumbnail file={file.data} />
            <p>
              Delete <strong>{name}</strong> for good? Its links stop working.
            </p>
            <div class="actions">
              <button type="button" class="danger" onClick={() => remove(name)}>
                Delete {name}
              </button>
              <a class="button secondary" href="#/files">
                Keep it
              </a>
            </div>
            {error && <FormError message={error} />}
          </div>
        )
      )}
      <p>
        <a href="#/files">My files</a>
      </p>
    </Page>
  );
}
