// The wiring rule of docs/CONTRIBUTING.md "One composition style", checked over the source: only builders
// construct the domains' services and repositories, each of those takes one `<Name>Deps` object, and no
// source file outgrows one idea (400 lines).
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '#infra/bundling.ts';

/** Where the domains' classes live: every class there is a service, a repository, an error or a value. */
const DOMAIN_ROOTS = ['lib/accounts', 'lib/files', 'lib/billing', 'lib/moderation', 'lib/webhooks'];
/** Platform classes that are services over the table rather than adapters: built by builders too. */
const PLATFORM_SERVICES = ['lib/platform/cdn/takedowns.ts'];

/**
 * Domain classes that anything may construct, each for its reason. Errors (a class extending an error) are
 * allowed without being listed: throwing one is not wiring.
 */
const ALLOWED: Readonly<Record<string, string>> = {
  // Values one call makes and hands back, not collaborators.
  Reservation: 'the quota service hands one out per upload (lib/files/quota-service.ts)',
  GatewayRegistry: 'the channels one version of the payment settings registers (lib/billing/registry.ts)',
  Splice: 'the byte ranges one metadata strip keeps (lib/files/metadata/)',
};

/** Files that may construct domain classes: the builders, and the resources' accessors of lib/wiring/. */
const isBuilder = (path: string) =>
  /^lib\/(.+\/)?build[^/]*\.ts$/.test(path) || path.startsWith('lib/wiring/');

/** Source files over this many lines hold more than one idea (docs/CONTRIBUTING.md "Rules"). */
const MAX_LINES = 400;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const read = (path: string) => readFileSync(join(PROJECT_ROOT, path), 'utf8');

/** The code without its comments (a comment may name a constructor call; a URL's `//` follows a colon). */
const withoutComments = (text: string) =>
  text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');

interface DomainClass {
  name: string;
  file: string;
  isError: boolean;
  /** The constructor's parameters as written (none: the class declares no constructor). */
  parameters: string[];
}

const CLASS = /^export (?:abstract )?class (\w+)(?: extends (\w+))?/gm;

/** The top-level parameters of the constructor that follows `from`, split on commas outside brackets. */
function constructorParameters(code: string, from: number, to: number): string[] {
  const start = code.indexOf('constructor(', from);
  if (start < 0 || start > to) return [];
  const parameters: string[] = [];
  let depth = 0;
  let current = '';
  for (let at = start + 'constructor('.length; at < code.length; at++) {
    const char = code[at]!;
    if (depth === 0 && char === ')') break;
    if ('([{<'.includes(char)) depth++;
    if (')]}>'.includes(char) && !(char === '>' && code[at - 1] === '=')) depth--;
    if (depth === 0 && char === ',') {
      parameters.push(current.trim());
      current = '';
    } else current += char;
  }
  if (current.trim()) parameters.push(current.trim());
  return parameters;
}

function domainClasses(): DomainClass[] {
  const files = [...DOMAIN_ROOTS.flatMap(sourceFiles), ...PLATFORM_SERVICES];
  const declared = files.flatMap((file) => {
    const code = withoutComments(read(file));
    const found = [...code.matchAll(CLASS)];
    return found.map((match, index) => ({
      name: match[1]!,
      file,
      parent: match[2],
      parameters: constructorParameters(code, match.index, found[index + 1]?.index ?? code.length),
    }));
  });
  const errors = new Set(['Error', 'AppError']);
  // An error's subclass is an error (UploadError extends AppError, a domain's error may extend that).
  for (let grew = true; grew; ) {
    grew = false;
    for (const { name, parent } of declared) {
      if (parent && errors.has(parent) && !errors.has(name)) grew = errors.add(name) !== undefined;
    }
  }
  return declared.map(({ name, file, parameters }) => ({
    name,
    file,
    parameters,
    isError: errors.has(name),
  }));
}

const PRODUCTION_ROOTS = ['lib', 'functions', 'infra', 'scripts'];

/** Each `new X(` of a wired domain class outside the builders, as `file: new X(`. */
function constructionsOutsideBuilders(
  classes: readonly DomainClass[],
  files: ReadonlyArray<{ path: string; text: string }>,
): string[] {
  const wired = new Set(classes.filter((c) => !c.isError && !(c.name in ALLOWED)).map((c) => c.name));
  return files.flatMap(({ path, text }) =>
    isBuilder(path)
      ? []
      : [...withoutComments(text).matchAll(/\bnew (\w+)\s*[(<]/g)]
          .filter((match) => wired.has(match[1]!))
          .map((match) => `${path}: new ${match[1]}(`),
  );
}

/** Each domain class whose constructor takes more than one parameter (positional arguments). */
function positionalConstructors(classes: readonly DomainClass[]): string[] {
  return classes
    .filter((c) => !c.isError && !(c.name in ALLOWED) && c.parameters.length > 1)
    .map((c) => `${c.file}: ${c.name}(${c.parameters.join(', ')})`);
}

/** Each source file over MAX_LINES lines that is not a known exception, with its length. */
function longFiles(files: ReadonlyArray<{ path: string; text: string }>): string[] {
  return files
    .filter(({ path }) => !path.endsWith('schema.d.ts'))
    .map(({ path, text }) => ({ path, lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) }))
    .filter(({ lines }) => lines > MAX_LINES)
    .map(({ path, lines }) => `${path}: ${lines} lines`);
}

const production = () => PRODUCTION_ROOTS.flatMap(sourceFiles).map((path) => ({ path, text: read(path) }));

describe('wiring rules', () => {
  const classes = domainClasses();

  it('finds the domain classes it checks (a parse that found none would check nothing)', () => {
    const names = classes.map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(['AccountRepository', 'FileRepository', 'Takedowns']));
    expect(classes.find((c) => c.name === 'UploadError')?.isError).toBe(true);
    expect(classes.find((c) => c.name === 'LoginGuard')?.parameters).toHaveLength(1);
  });

  it('constructs services and repositories only in builders (lib/**/build*.ts) and lib/wiring/', () => {
    expect(constructionsOutsideBuilders(classes, production())).toEqual([]);
  });

  it('gives every service and repository one <Name>Deps object, never positional arguments', () => {
    expect(positionalConstructors(classes)).toEqual([]);
  });

  it(`keeps every source file at or under ${MAX_LINES} lines`, () => {
    const files = [...production(), ...sourceFiles('web/src').map((path) => ({ path, text: read(path) }))];
    expect(longFiles(files)).toEqual([]);
  });

  it('would fail on each broken rule (the checks themselves)', () => {
    const handWired = [{ path: 'functions/x/deps.ts', text: 'const t = new Takedowns({ table });' }];
    expect(constructionsOutsideBuilders(classes, handWired)).toEqual(['functions/x/deps.ts: new Takedowns(']);
    const inBuilder = [{ path: 'lib/files/build.ts', text: 'new Takedowns({ table })' }];
    expect(constructionsOutsideBuilders(classes, inBuilder)).toEqual([]);
    const thrown = [{ path: 'lib/files/x.ts', text: "throw new UploadError('bad_request', 'm');" }];
    expect(constructionsOutsideBuilders(classes, thrown)).toEqual([]);
    const positional = { name: 'X', file: 'lib/files/x.ts', isError: false, parameters: ['a: T', 'b: U'] };
    expect(positionalConstructors([positional])).toHaveLength(1);
    expect(longFiles([{ path: 'lib/x.ts', text: 'a\n'.repeat(MAX_LINES + 1) }])).toHaveLength(1);
    expect(longFiles([{ path: 'lib/x.ts', text: 'a\n'.repeat(MAX_LINES) }])).toEqual([]);
  });
});
