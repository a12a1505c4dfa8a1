// docs/CONTRIBUTING.md "Layers": the domains reach AWS only through lib/platform adapters (Table, FileStorage,
// the event bus...). Checked over the source: no domain file imports an AWS SDK package or sends a command.
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '#infra/bundling.ts';

const DOMAINS = ['lib/accounts', 'lib/files', 'lib/billing', 'lib/moderation'];
/** An `@aws-sdk/` package named by an import, an export or a dynamic import (types included). */
const SDK_IMPORT = /(?:from\s*|import\s*\(?\s*)['"](@aws-sdk\/[^'"]+)['"]/g;
const SEND = /client\s*\.\s*send\s*\(/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx)$/.test(entry.name) ? [path] : [];
  });
}

/** What in this source reaches AWS past the adapters: each SDK package imported, each `client.send(`. */
function violations(path: string, source: string): string[] {
  return [
    ...[...source.matchAll(SDK_IMPORT)].map((match) => `${path} imports ${match[1]}`),
    ...[...source.matchAll(SEND)].map(() => `${path} calls client.send(`),
  ];
}

describe('the domains reach AWS only through lib/platform adapters', () => {
  const files = DOMAINS.flatMap(sourceFiles);

  it('reads every domain file', () => {
    expect(files.length).toBeGreaterThan(100);
    for (const domain of DOMAINS) expect(files.some((file) => file.startsWith(`${domain}/`))).toBe(true);
  });

  it('no domain file imports an AWS SDK package or sends a client command', () => {
    const found = files.flatMap((file) => violations(file, readFileSync(join(PROJECT_ROOT, file), 'utf8')));
    expect(found).toEqual([]);
  });

  it('catches an SDK import of any kind and a command sent through a client', () => {
    const samples = [
      "import { ScanCommand } from '@aws-sdk/lib-dynamodb';",
      "import type { S3Client } from '@aws-sdk/client-s3';",
      "export { getSignedUrl } from '@aws-sdk/s3-request-presigner';",
      "const sdk = await import('@aws-sdk/client-eventbridge');",
      'await table.client.send(command);',
      'await this.client\n  .send(command);',
    ];
    expect(samples.map((sample) => violations('lib/files/x.ts', sample))).toEqual(
      samples.map(() => [expect.any(String)]),
    );
    expect(violations('lib/files/x.ts', "import { Table } from '#lib/platform/db/table.ts';")).toEqual([]);
  });
});
