// `npm run import -- <folder>`: imports a Lsky Pro or Chevereto library (its storage folder and a mysqldump
// of its users, albums and images; docs/COMPAT.md "Importing a library") into the configured stage: the
// deployed table and bucket (TABLE_NAME and AWS credentials) or the local stand-ins while `npm start` runs.
// One line per file, then a summary; a second run skips what the first imported.
import { resolve } from 'node:path';
import { loadSettingsOrExit } from './settings.ts';

async function main(): Promise<void> {
  const folder = process.argv[2];
  if (!folder) {
    console.error('Usage: npm run import -- <folder holding the storage folder and the .sql dump>');
    process.exit(1);
  }
  const running = await loadSettingsOrExit();
  // Its lines name the files at the address the running `npm start` serves them from.
  if (running && !process.env.BASE_URL) process.env.BASE_URL = running.api_url;
  const [{ config }, { groupResources }, { needs }, { buildLibraryImporter }, { readLibrary }] =
    await Promise.all([
      import('#lib/platform/config/index.ts'),
      import('#lib/wiring/resources.ts'),
      import('#functions/files/needs.ts'),
      import('#lib/wiring/import.ts'),
      import('#lib/compat/import/libraries.ts'),
    ]);
  const library = readLibrary(resolve(folder));
  console.log(
    `Importing a ${library.kind} library: ${library.users.length} user(s), ${library.albums.length} album(s), ` +
      `${library.images.length} image(s) into table ${config.table_name}.`,
  );
  const importer = buildLibraryImporter(groupResources('files', needs, config), (line) => console.log(line));
  const { accounts, albums, files } = await importer.run(library);
  console.log(
    `Done: accounts ${accounts.matched} matched, ${accounts.created} created; albums ${albums.created} created, ` +
      `${albums.skipped} skipped; files ${files.imported} imported, ${files.skipped} skipped, ${files.failed} failed.`,
  );
  if (files.failed > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(`Failed: ${(error as Error).message}`);
  process.exit(1);
});
