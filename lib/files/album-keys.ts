// The keys of albums and of album membership (docs/DESIGN.md 16), shared by the album service and the file
// records that point at an album.

export const albumKey = (id: string) => ({ pk: `album#${id}`, sk: 'album' });

/** The `due` index's partition of an album's files (sparse: only files in an album carry it). */
export const albumFilesPartition = (albumId: string) => `album#${albumId}`;

/** Album ids are UUIDs; anything else names no album. */
export const ALBUM_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The index keys of a file in an album (newest first within it, like the owner's listing); none outside. */
export function albumIndexKeys(albumId: string | null | undefined, sortKey: string) {
  return albumId ? { gsi3pk: albumFilesPartition(albumId), gsi3sk: sortKey } : {};
}
