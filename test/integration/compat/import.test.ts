// The library import (docs/COMPAT.md "Importing a library") over this file's table and bucket: a small Lsky
// Pro 2 library in Lsky's own layout (test/fixtures/lsky: storage/app/uploads/<Y>/<m>/<d>/<name> and a
// mysqldump of users, albums and images) lands every file with its owner (matched by e-mail, or created
// without a password) and its album; a second run changes nothing.
import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { needs as filesNeeds } from '#functions/files/needs.ts';
import { readLibrary } from '#lib/compat/import/libraries.ts';
import { buildLibraryImporter } from '#lib/wiring/import.ts';
import { createTestAccount } from '#test/support/accounts.ts';
import { testDeps } from '#test/support/deps.ts';
import { testResources } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';

const FIXTURE = fileURLToPath(new URL('../../fixtures/lsky', import.meta.url));
const uploads = `${FIXTURE}/storage/app/uploads`;

async function bytesOf(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

beforeAll(async () => {
  await provisionTestStack();
});

describe('npm run import of a Lsky Pro library', () => {
  it('lands every file with its album and owner, and a second run changes nothing', async () => {
    // Prepare: bo already has an account here (matched by e-mail); ada has none (created).
    const bo = await createTestAccount({ email: 'bo.lsky@example.com' });
    const deps = testDeps();
    const { files, albums } = deps.groups.files.services;
    const repository = deps.accounts.repository;
    const lines: string[] = [];
    const importer = buildLibraryImporter(testResources('files', filesNeeds), (line) => lines.push(line));

    // Act
    const first = await importer.run(readLibrary(FIXTURE));

    // Assess: the summary and a line per file.
    expect(first).toEqual({
      accounts: { matched: 1, created: 1 },
      albums: { created: 2, skipped: 0 },
      files: { imported: 4, skipped: 0, failed: 0 },
    });
    expect(lines.filter((line) => /^\[\d\/4\] lsky image \d: imported as /.test(line))).toHaveLength(4);
    const adaId = await repository.ownerOf('ada.lsky@example.com');
    const ada = await repository.get(adaId ?? '');
    expect(ada).toMatchObject({ username: 'ada', email: 'ada.lsky@example.com', role: 'user' });
    // No password anyone knows: its owner sets one by a reset.
    expect(ada?.unusable_hash).toBe(ada?.password_hash);

    const snapshot = async () => {
      const adaFiles = (await files.list({ id: adaId!, role: 'user' }, { limit: 50 })).items;
      const boFiles = (await files.list({ id: bo.account.id, role: 'user' }, { limit: 50 })).items;
      const adaAlbums = (await albums.list(adaId!, { limit: 50 })).items;
      const boAlbums = (await albums.list(bo.account.id, { limit: 50 })).items;
      return { adaFiles, boFiles, adaAlbums, boAlbums };
    };
    const before = await snapshot();
    expect(before.adaAlbums.map((album) => [album.name, album.description])).toEqual([
      ['Screenshots', 'Ada\'s captures; "work" only'],
    ]);
    expect(before.boAlbums.map((album) => album.name)).toEqual(['旅行']);
    const byName = new Map([...before.adaFiles, ...before.boFiles].map((file) => [file.original_name, file]));
    expect([...byName.keys()].sort()).toEqual(
      ['it\'s a "bug", (see 2).png', 'login page.png', 'loose.png', '长城.png'].sort(),
    );
    const screenshots = before.adaAlbums[0]!.id;
    expect(byName.get('login page.png')).toMatchObject({ album_id: screenshots, permission: 'public' });
    expect(byName.get('it\'s a "bug", (see 2).png')).toMatchObject({
      album_id: screenshots,
      permission: 'private',
    });
    expect(byName.get('loose.png')?.album_id).toBeNull();
    expect(byName.get('长城.png')?.album_id).toBe(before.boAlbums[0]!.id);
    expect(before.boFiles.map((file) => file.original_name)).toEqual(['长城.png']);
    // Each file's bytes are the library's.
    const { storage } = deps;
    for (const [name, path] of [
      ['login page.png', '2023/05/01/a1b2c3d4e5f6.png'],
      ['长城.png', '2023/06/12/ba9876543210.png'],
    ] as const) {
      const stored = await storage.open(byName.get(name)!.key);
      expect((await bytesOf(stored!.body)).equals(readFileSync(`${uploads}/${path}`))).toBe(true);
    }

    // Act again: the same library.
    lines.length = 0;
    const second = await importer.run(readLibrary(FIXTURE));

    expect(second).toEqual({
      accounts: { matched: 2, created: 0 },
      albums: { created: 0, skipped: 2 },
      files: { imported: 0, skipped: 4, failed: 0 },
    });
    expect(lines.every((line) => line.endsWith('skipped (imported before)'))).toBe(true);
    expect(await snapshot()).toEqual(before);
  });
});

describe('npm run import of a Chevereto library', () => {
  it('lands its files in their album for the owner, once', async () => {
    const deps = testDeps();
    const { files, albums } = deps.groups.files.services;
    const importer = buildLibraryImporter(testResources('files', filesNeeds), () => {});
    const folder = fileURLToPath(new URL('../../fixtures/chevereto', import.meta.url));

    const first = await importer.run(readLibrary(folder));
    const second = await importer.run(readLibrary(folder));

    expect(first).toEqual({
      accounts: { matched: 0, created: 1 },
      albums: { created: 1, skipped: 0 },
      files: { imported: 2, skipped: 0, failed: 0 },
    });
    expect(second.files).toEqual({ imported: 0, skipped: 2, failed: 0 });
    const cleo = (await deps.accounts.repository.ownerOf('cleo.chv@example.com'))!;
    const [desk] = (await albums.list(cleo, { limit: 10 })).items;
    expect(desk).toMatchObject({ name: 'Desk', description: 'Things on my desk' });
    const listed = (await files.list({ id: cleo, role: 'user' }, { limit: 10 })).items;
    expect(Object.fromEntries(listed.map((file) => [file.original_name, file.album_id]))).toEqual({
      'lamp.png': desk!.id,
      'mug.png': null,
    });
  });
});
