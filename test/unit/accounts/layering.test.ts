// The account domain stands below the edge and beside the other domains: it reaches none of them, so a
// domain change never drags HTTP, uploads or billing into the auth bundle (docs/CONTRIBUTING.md).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../../../lib/accounts');
const FORBIDDEN = /from '#lib\/(http|files|billing)\//;

describe('lib/accounts', () => {
  it('imports nothing from lib/http, lib/files or lib/billing', () => {
    // Prepare
    const files = readdirSync(ROOT).filter((name) => name.endsWith('.ts'));
    // Act
    const offenders = files.flatMap((name) =>
      readFileSync(join(ROOT, name), 'utf8')
        .split('\n')
        .filter((line) => FORBIDDEN.test(line))
        .map((line) => `${name}: ${line.trim()}`),
    );
    // Assess
    expect(files.length).toBeGreaterThan(0);
    expect(offenders).toEqual([]);
  });
});
