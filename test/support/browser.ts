// A real headless Chromium for browser tests (Debian's /usr/bin/chromium, installed by .ci/run), with
// screenshots at desktop and phone width and an axe-core accessibility check.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, type BrowserContextOptions, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function browserMissing(what: string): string | undefined {
  return existsSync(CHROMIUM)
    ? undefined
    : `${CHROMIUM} is absent: install it with "apt-get install -y chromium" to run ${what}`;
}

/** Where screenshots go: a gitignored folder a CI run can keep as artifacts. */
export const ARTIFACTS = fileURLToPath(new URL('../../test-results/console', import.meta.url));

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function openBrowser(options: BrowserContextOptions = {}): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'console-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
    ...options,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The widths pages are drawn at: a laptop, and a common phone (390 px, as the console's reviewers use);
 * sideways scrolling is checked narrower still, at 360 px (test/e2e/console/harness.ts checkPage).
 */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

/** Full-page screenshots at 1280 and 390 px wide; leaves the page at desktop width. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  for (const [label, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    await page.waitForTimeout(100);
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${label}.png`), fullPage: true });
  }
  await page.setViewportSize(VIEWPORTS.desktop);
}

/**
 * What sticks out past the right edge when the page is wider than its viewport (at 360 px nothing should
 * need sideways scrolling): the outermost such elements, named by tag and class; empty when nothing does.
 */
export async function horizontalOverflow(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    interface Box {
      tagName: string;
      className: unknown;
      parentElement: Box | null;
      getBoundingClientRect(): { right: number };
    }
    const doc = (
      globalThis as unknown as {
        document: {
          documentElement: { scrollWidth: number; clientWidth: number };
          querySelectorAll(selector: string): Iterable<Box>;
        };
      }
    ).document;
    const width = doc.documentElement.clientWidth;
    if (doc.documentElement.scrollWidth <= width + 1) return [];
    const wide = [...doc.querySelectorAll('body *')].filter(
      (element) => element.getBoundingClientRect().right > width + 1,
    );
    return wide
      .filter((element) => !wide.includes(element.parentElement as Box))
      .map((element) => `${element.tagName.toLowerCase()}.${String(element.className)}`);
  });
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * axe-core's serious and critical findings on the page as it is now. The source goes in through the
 * DevTools protocol (page.evaluate), which the page's CSP does not govern, so the page keeps its policy.
 */
export async function seriousAccessibilityViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<unknown> } }
    ).axe;
    const page = (globalThis as unknown as { document: unknown }).document;
    const result = (await axe.run(page, { resultTypes: ['violations'] })) as {
      violations: Array<{
        id: string;
        impact: string | null;
        help: string;
        nodes: Array<{ target: unknown[] }>;
      }>;
    };
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(' ')),
    }));
  });
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}
