// A peer's library as the importer reads it (docs/COMPAT.md "Importing a library"): a folder holding the
// peer's storage folder and a `mysqldump` of its users, albums and images tables, read into one plain model.
// - Lsky Pro 2: `storage/app/uploads/<path>/<name>` (its local strategy's root; `<path>` is `Y/m/d`), and the
//   tables `users`, `albums`, `images`.
// - Chevereto: `images/<Y>/<m>/<d>/<name>.<extension>` (`datefolder` storage; `direct`: `images/<name>.<ext>`),
//   and the tables `chv_users`, `chv_albums`, `chv_images`.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSqlDump, type SqlRow } from './sql-dump.ts';

export type LibraryKind = 'lsky' | 'chevereto';

export interface Library {
  kind: LibraryKind;
  users: Array<{ sourceId: string; email: string; name: string }>;
  albums: Array<{ sourceId: string; ownerId: string; name: string; description: string }>;
  images: Array<{
    sourceId: string;
    /** The uploader's source id; null for a guest upload (which has no owner to import it for). */
    ownerId: string | null;
    albumId: string | null;
    originalName: string;
    /** Where its bytes are, in the storage folder. */
    file: string;
    permission: 'public' | 'private';
  }>;
}

const str = (value: SqlRow[string] | undefined) =>
  value === null || value === undefined ? '' : String(value);
const idOrNull = (value: SqlRow[string] | undefined) =>
  value === null || value === undefined ? null : String(value);

/** The one `.sql` file in the folder (the dump). */
function dumpIn(folder: string): Map<string, SqlRow[]> {
  const dumps = readdirSync(folder).filter((name) => name.endsWith('.sql'));
  if (dumps.length !== 1)
    throw new Error(`${folder}: expected one .sql file (the mysqldump), found ${dumps.length}`);
  return parseSqlDump(readFileSync(join(folder, dumps[0]!), 'utf8'));
}

function lsky(folder: string): Library {
  const tables = dumpIn(folder);
  const root = join(folder, 'storage', 'app', 'uploads');
  return {
    kind: 'lsky',
    users: (tables.get('users') ?? []).map((row) => ({
      sourceId: str(row.id),
      email: str(row.email),
      name: str(row.name),
    })),
    albums: (tables.get('albums') ?? []).map((row) => ({
      sourceId: str(row.id),
      ownerId: str(row.user_id),
      name: str(row.name),
      description: str(row.intro),
    })),
    images: (tables.get('images') ?? []).map((row) => ({
      sourceId: str(row.id),
      ownerId: idOrNull(row.user_id),
      albumId: idOrNull(row.album_id),
      originalName: str(row.origin_name) || str(row.name),
      file: join(root, str(row.path), str(row.name)),
      permission: row.permission === 1 ? 'public' : 'private',
    })),
  };
}

function chevereto(folder: string): Library {
  const tables = dumpIn(folder);
  return {
    kind: 'chevereto',
    users: (tables.get('chv_users') ?? []).map((row) => ({
      sourceId: str(row.user_id),
      email: str(row.user_email),
      name: str(row.user_username),
    })),
    albums: (tables.get('chv_albums') ?? []).map((row) => ({
      sourceId: str(row.album_id),
      ownerId: str(row.album_user_id),
      name: str(row.album_name),
      description: str(row.album_description),
    })),
    images: (tables.get('chv_images') ?? []).map((row) => {
      const stored = `${str(row.image_name)}.${str(row.image_extension)}`;
      const day = str(row.image_date).slice(0, 10).split('-');
      return {
        sourceId: str(row.image_id),
        ownerId: idOrNull(row.image_user_id),
        albumId: idOrNull(row.image_album_id),
        originalName: str(row.image_original_filename) || stored,
        file:
          str(row.image_storage_mode) === 'direct'
            ? join(folder, 'images', stored)
            : join(folder, 'images', ...day, stored),
        // Chevereto's privacy is its albums'; imported files start private, as uploads do here.
        permission: 'private',
      };
    }),
  };
}

/** The library in `folder`, told apart by its layout. */
export function readLibrary(folder: string): Library {
  if (existsSync(join(folder, 'storage', 'app', 'uploads'))) return lsky(folder);
  if (existsSync(join(folder, 'images'))) return chevereto(folder);
  throw new Error(
    `${folder}: neither a Lsky Pro library (storage/app/uploads) nor a Chevereto one (images/) with its .sql dump`,
  );
}
