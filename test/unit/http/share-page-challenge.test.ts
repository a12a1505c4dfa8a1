// The share page's password form where proof of work is required (docs/ACCOUNTS.md "Proof of work"): the
// page runs no script without it; with ALTCHA, the widget's script from this origin; with Turnstile, its
// widget naming `altcha` as the field, its script and frame allowed from Cloudflare's origin only.
import { describe, expect, it } from 'vitest';
import type { PageChallenge } from '#lib/accounts/proof-of-work.ts';
import { renderSharePage, SHARE_ALTCHA_SCRIPT, sharePageCsp } from '#lib/http/share-page.ts';
import { siteDefaults } from '#lib/platform/site/site.ts';

const SITE = siteDefaults('Image host');
const page = (challenge: PageChallenge) => ({
  html: renderSharePage({ kind: 'password', id: 'abc', error: null, challenge }, SITE),
  csp: sharePageCsp('https://img.example', SITE, challenge),
});

describe('the share password form and proof of work', () => {
  it('has no script and a policy allowing none when no challenge is required', () => {
    const { html, csp } = page(null);
    expect(html).not.toContain('<script');
    expect(html).not.toContain('novalidate');
    expect(csp).not.toContain('script-src');
  });

  it("loads ALTCHA's widget from this origin and fills `altcha`", () => {
    const { html, csp } = page({ provider: 'altcha' });
    expect(html).toContain(`<script type="module" src="${SHARE_ALTCHA_SCRIPT}"></script>`);
    expect(html).toContain('<input type="hidden" name="altcha">');
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("worker-src 'self'");
    expect(csp).not.toMatch(/https:\/\/(?!img\.example)/);
  });

  it("shows Turnstile's widget with `altcha` as its field, allowed from Cloudflare alone", () => {
    const { html, csp } = page({ provider: 'turnstile', siteKey: '0x4AAA"<site>' });
    expect(html).toContain('data-sitekey="0x4AAA&quot;&lt;site&gt;"');
    expect(html).toContain('data-response-field-name="altcha"');
    expect(html).toContain('<script src="https://challenges.cloudflare.com/turnstile/v0/api.js"');
    expect(csp).toContain('script-src https://challenges.cloudflare.com');
    expect(csp).toContain('frame-src https://challenges.cloudflare.com');
    expect(csp).not.toContain("script-src 'self'");
  });
});
