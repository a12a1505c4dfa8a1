// The billing domain's boundaries: it names failures with lib/core errors and leaves statuses and envelopes
// to the edge, so nothing under lib/billing may import lib/http; and it has no module that only re-exports.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const BILLING = join(process.cwd(), 'lib', 'billing');

function sourcesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourcesUnder(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module specifier a file imports or re-exports from. */
function specifiersOf(source: string): string[] {
  return [...source.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+'([^']+)'/gms)].map((match) => match[1]!);
}

describe('lib/billing', () => {
  const files = sourcesUnder(BILLING);

  it('has sources to check', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it('never imports the HTTP edge', () => {
    const offenders = files.flatMap((file) =>
      specifiersOf(readFileSync(file, 'utf8'))
        .filter((specifier) => /^#lib\/http\/|^(\.\.\/)+http\//.test(specifier))
        .map((specifier) => `${relative(BILLING, file)} -> ${specifier}`),
    );
    expect(offenders).toEqual([]);
  });

  it('has no module that only re-exports', () => {
    const barrels = files.filter((file) => {
      const code = readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.trim().startsWith('//'))
        .join('\n');
      return code.length > 0 && /^(\s*export\s+(type\s+)?(\*|\{[^}]*\})\s+from\s+'[^']+';\s*)+$/s.test(code);
    });
    expect(barrels.map((file) => relative(BILLING, file))).toEqual([]);
  });
});
