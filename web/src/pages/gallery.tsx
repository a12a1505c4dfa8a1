// The public gallery: everyone's public files, no login needed; the files grid read-only (the lightbox
// shows the links, no owner controls, no selection). Empty, it says how a file gets here.

import { api, call } from '../api/client.ts';
import { session } from '../api/session.ts';
import { FileGrid } from '../file-grid.tsx';
import { Page, usePages } from '../ui.tsx';

export function GalleryPage() {
  const gallery = usePages((cursor) =>
    call(api.GET('/api/v1/gallery', { params: { query: { limit: '60', ...(cursor ? { cursor } : {}) } } })),
  );
  const hint = session.user() ? (
    <>
      Select files in <a href="#/files">My files</a> and choose Make public to show them here.
    </>
  ) : (
    <>
      <a href="#/login">Log in</a> or <a href="#/register">register</a> to upload, then make your files public
      to show them here.
    </>
  );
  return (
    <Page title="Public gallery">
      <FileGrid list={gallery} label="Public files" mode="gallery" empty="Nothing public yet." hint={hint} />
    </Page>
  );
}
