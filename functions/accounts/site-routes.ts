// The operator's site (docs/DEPLOYMENT.md "Branding"): read by everyone (the console loads it at start, the
// CDN and browsers may keep it a minute), saved whole by administrators with the footer sanitized.
import { ok, publicFor } from '#lib/http/envelope.ts';
import { defineRoute } from '#lib/http/handler.ts';
import { siteBody, siteView } from '#lib/http/schemas/site.ts';
import { sanitizeFooter } from '#lib/platform/site/footer.ts';
import type { SiteStore } from '#lib/platform/site/site.ts';

export function siteRoutes(site: () => SiteStore) {
  return {
    'GET /api/v1/site': defineRoute({
      summary:
        "The site's branding: name, logo, accent colour, favicon, footer, terms, privacy, channel names",
      response: siteView,
      run: async () => {
        const { version, site: current } = await site().current();
        return publicFor(ok({ version, ...current }), 60);
      },
    }),
    'PUT /api/v1/admin/site': defineRoute({
      summary:
        "Saves the site's branding whole, `version` the one read (409 when another save came first); the footer is stored sanitized",
      body: siteBody,
      response: siteView,
      errors: [409],
      run: async (request) => {
        const { version: expected, footer_html, ...fields } = request.body;
        const { version, site: saved } = await site().save(
          { ...fields, footer_html: sanitizeFooter(footer_html) },
          expected,
        );
        return ok({ version, ...saved });
      },
    }),
  };
}
