// The files domain's imports: nothing from the HTTP edge, and no cycle between lib/files and its metadata.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../../../lib/files');

function importsOf(folder: string): Array<[file: string, specifier: string]> {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .flatMap((file) =>
      [...readFileSync(join(folder, file), 'utf8').matchAll(/\bfrom\s+'([^']+)'|import\(\s*'([^']+)'/g)].map(
        (match) => [file, match[1] ?? match[2] ?? ''] as [string, string],
      ),
    );
}

describe('lib/files imports', () => {
  it('nothing from lib/http (the edge maps the domain, never the reverse)', () => {
    const edge = importsOf(ROOT).filter(([, specifier]) => /#lib\/http\/|\.\.\/http\//.test(specifier));
    expect(edge).toEqual([]);
  });

  it('lib/files/metadata imports nothing from lib/files', () => {
    const up = importsOf(join(ROOT, 'metadata')).filter(([, specifier]) =>
      /^#lib\/files\/(?!metadata\/)|^\.\.\//.test(specifier),
    );
    expect(up).toEqual([]);
  });
});
