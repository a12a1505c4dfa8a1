// The import directions of docs/CONTRIBUTING.md "Layers", checked over the source: each layer imports only
// the layers below it, nothing in lib/ reaches functions/ or the local runtime, and no folder cycle; the
// same for the web console (web/src: shell -> pages -> shared components -> API client).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '#infra/bundling.ts';

type Layers = ReadonlyArray<{ name: string; prefixes: string[]; mayImport: string[] }>;

/** Layers from the top down; a file belongs to the first whose prefix its path starts with. */
const LAYERS: Layers = [
  {
    name: 'scripts',
    prefixes: ['scripts/'],
    mayImport: ['infra', 'functions', 'wiring', 'peers', 'edge', 'domains', 'platform', 'core'],
  },
  {
    name: 'infra',
    prefixes: ['infra/'],
    mayImport: ['functions', 'wiring', 'peers', 'edge', 'domains', 'platform', 'core'],
  },
  {
    name: 'functions',
    prefixes: ['functions/'],
    mayImport: ['wiring', 'peers', 'edge', 'domains', 'platform', 'core'],
  },
  {
    name: 'wiring',
    prefixes: ['lib/wiring/'],
    mayImport: ['peers', 'edge', 'domains', 'platform', 'core'],
  },
  // The peers' APIs and libraries (docs/COMPAT.md): their answer shapes over the edge's, and the import.
  { name: 'peers', prefixes: ['lib/compat/'], mayImport: ['edge', 'domains', 'platform', 'core'] },
  { name: 'edge', prefixes: ['lib/http/'], mayImport: ['domains', 'platform', 'core'] },
  {
    name: 'domains',
    prefixes: [
      'lib/accounts/',
      'lib/files/',
      'lib/billing/',
      'lib/moderation/',
      'lib/lifecycle/',
      'lib/webhooks/',
    ],
    mayImport: ['platform', 'core'],
  },
  { name: 'platform', prefixes: ['lib/platform/'], mayImport: ['core'] },
  { name: 'core', prefixes: ['lib/core/'], mayImport: [] },
];

/**
 * Between the domains, only these directions (billing settles into files' quotas; both read accounts;
 * moderation decides on files and records administrators' actions in the accounts' audit log; an
 * account's lifecycle exports and deletes what the others hold).
 */
const DOMAIN_DIRECTIONS: Readonly<Record<string, string[]>> = {
  'lib/accounts/': [],
  'lib/files/': ['lib/accounts/'],
  'lib/billing/': ['lib/accounts/', 'lib/files/'],
  'lib/moderation/': ['lib/accounts/', 'lib/files/'],
  // An account's export and deletion read and delete what the three others hold.
  'lib/lifecycle/': ['lib/accounts/', 'lib/files/', 'lib/billing/', 'lib/webhooks/'],
  // Webhooks are made of what files and billing write to the outbox.
  'lib/webhooks/': ['lib/files/', 'lib/billing/'],
};

/** The console's layers: the shell mounts the pages; a page uses the shared components and the API client. */
const CONSOLE_LAYERS: Layers = [
  { name: 'shell', prefixes: ['web/src/shell/'], mayImport: ['pages', 'shared', 'api'] },
  { name: 'pages', prefixes: ['web/src/pages/'], mayImport: ['shared', 'api'] },
  { name: 'api', prefixes: ['web/src/api/'], mayImport: [] },
  { name: 'shared', prefixes: ['web/src/'], mayImport: ['api'] },
];

const SOURCE_ROOTS = ['lib', 'functions', 'infra', 'scripts'];
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

interface Edge {
  from: string;
  to: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every import of the source between files of this repository, as repository-relative paths. */
function importEdges(roots = SOURCE_ROOTS): Edge[] {
  const files = roots.flatMap(sourceFiles);
  return files.flatMap((from) =>
    [...readFileSync(join(PROJECT_ROOT, from), 'utf8').matchAll(IMPORT)].flatMap((match) => {
      const specifier = match[1] ?? match[2]!;
      if (specifier.startsWith('#')) return [{ from, to: specifier.slice(1) }];
      if (specifier.startsWith('.'))
        return [{ from, to: posix.normalize(posix.join(posix.dirname(from), specifier)) }];
      return [];
    }),
  );
}

function layerOf(path: string, layers = LAYERS) {
  return layers.find((layer) => layer.prefixes.some((prefix) => path.startsWith(prefix)));
}

/** Why an import within one layer is refused: between domains, only DOMAIN_DIRECTIONS. */
function domainRule(from: string, to: string): string | undefined {
  const [a, b] = [from, to].map((path) => Object.keys(DOMAIN_DIRECTIONS).find((key) => path.startsWith(key)));
  return a && b && a !== b && !DOMAIN_DIRECTIONS[a]!.includes(b) ? `${a} may not import ${b}` : undefined;
}

/** A page is web/src/pages/<name>.tsx with its parts in web/src/pages/<name>/; it imports no other page. */
function pageRule(from: string, to: string): string | undefined {
  const [a, b] = [from, to].map((path) => /^web\/src\/pages\/([^/.]+)/.exec(path)?.[1]);
  return a && b && a !== b ? `page ${a} may not import page ${b}` : undefined;
}

/** The edges that break the directions: a layer reaching up, or an import within a layer its rule refuses. */
function layerViolations(edges: Edge[], layers = LAYERS, within = domainRule): string[] {
  return edges.flatMap(({ from, to }) => {
    const source = layerOf(from, layers);
    const target = layerOf(to, layers);
    if (!source) return [];
    if (!target) return to.startsWith('test/') ? [`${from} -> ${to} (production code imports a test)`] : [];
    if (source === target) {
      const refused = within(from, to);
      return refused ? [`${from} -> ${to} (${refused})`] : [];
    }
    return source.mayImport.includes(target.name)
      ? []
      : [`${from} -> ${to} (${source.name} may not import ${target.name})`];
  });
}

/** Folders that import each other, directly or round a longer loop (strongly connected folders). */
function folderCycles(edges: Edge[]): string[][] {
  const graph = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    const [a, b] = [dirname(from), dirname(to)];
    if (a === b) continue;
    if (!graph.has(a)) graph.set(a, new Set());
    graph.get(a)!.add(b);
  }
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

describe('the layers (docs/CONTRIBUTING.md)', () => {
  const edges = importEdges();

  it('reads the imports of every source folder', () => {
    expect(edges.length).toBeGreaterThan(500);
    const files = SOURCE_ROOTS.flatMap(sourceFiles);
    expect(new Set(files.map((file) => layerOf(file)?.name))).toEqual(
      new Set(LAYERS.map((layer) => layer.name)),
    );
  });

  it('imports only downwards, and between domains only accounts <- files <- billing', () => {
    expect(layerViolations(edges)).toEqual([]);
  });

  it('has no folder cycle', () => {
    expect(folderCycles(edges)).toEqual([]);
  });

  it('nothing in lib/ imports functions/, the local runtime or the CDK app', () => {
    const outward = edges.filter(({ from, to }) => from.startsWith('lib/') && !to.startsWith('lib/'));
    expect(outward.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('catches an import that reaches up, across domains, or round a loop', () => {
    const bad: Edge[] = [
      { from: 'lib/billing/orders.ts', to: 'lib/http/types.ts' },
      { from: 'lib/platform/db/table.ts', to: 'lib/accounts/model.ts' },
      { from: 'lib/accounts/login.ts', to: 'lib/files/usage.ts' },
      { from: 'lib/files/sniff.ts', to: 'infra/local/app.ts' },
    ];
    expect(layerViolations(bad)).toHaveLength(4);
    expect(
      folderCycles([
        { from: 'lib/files/a.ts', to: 'lib/files/metadata/b.ts' },
        { from: 'lib/files/metadata/b.ts', to: 'lib/files/c.ts' },
      ]),
    ).toEqual([['lib/files', 'lib/files/metadata']]);
  });
});

describe('the console layers (docs/CONTRIBUTING.md "The console")', () => {
  const edges = importEdges(['web/src']);

  it('reads the imports of every console folder', () => {
    expect(edges.length).toBeGreaterThan(100);
    expect(new Set(sourceFiles('web/src').map((file) => layerOf(file, CONSOLE_LAYERS)?.name))).toEqual(
      new Set(CONSOLE_LAYERS.map((layer) => layer.name)),
    );
  });

  it('imports only downwards (only the shell imports a page), and no page imports another page', () => {
    expect(layerViolations(edges, CONSOLE_LAYERS, pageRule)).toEqual([]);
  });

  it('has no folder cycle', () => {
    expect(folderCycles(edges)).toEqual([]);
  });

  it('catches a shared module or the API client importing up, and a page importing another page', () => {
    const bad: Edge[] = [
      { from: 'web/src/lightbox.tsx', to: 'web/src/pages/shares.tsx' },
      { from: 'web/src/api/client.ts', to: 'web/src/ui.tsx' },
      { from: 'web/src/pages/albums.tsx', to: 'web/src/pages/files.tsx' },
      { from: 'web/src/pages/plans/orders.tsx', to: 'web/src/pages/admin-orders.tsx' },
    ];
    expect(layerViolations(bad, CONSOLE_LAYERS, pageRule)).toHaveLength(4);
    const fine: Edge[] = [
      { from: 'web/src/shell/app.tsx', to: 'web/src/pages/security.tsx' },
      { from: 'web/src/pages/security.tsx', to: 'web/src/pages/security/totp.tsx' },
      { from: 'web/src/pages/security/totp.tsx', to: 'web/src/form.tsx' },
    ];
    expect(layerViolations(fine, CONSOLE_LAYERS, pageRule)).toEqual([]);
    expect(
      folderCycles([
        { from: 'web/src/app.tsx', to: 'web/src/pages/files.tsx' },
        { from: 'web/src/pages/files.tsx', to: 'web/src/ui.tsx' },
      ]),
    ).toEqual([['web/src', 'web/src/pages']]);
  });
});
