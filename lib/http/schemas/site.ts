// The operator's site (docs/DEPLOYMENT.md "Branding"): GET /api/v1/site for everyone, PUT /api/v1/admin/site.
import * as z from '#lib/platform/zod.ts';
import { nameCharacters } from './common.ts';

const text = (max: number) => z.string().check(z.maxLength(max, `must be at most ${max} characters`));
const label = () => z.string().check(z.minLength(1), z.maxLength(40), nameCharacters());
/** An https URL or a path on this origin (`/i/...`), never `//host` or another scheme. */
const link = () =>
  z.nullable(
    text(2048).check(
      z.refine((value) => /^https:\/\/[^/\s]+\S*$/.test(value) || /^\/(?![/\\])\S*$/.test(value), {
        message: 'must be an https URL or a path on this site starting with /',
      }),
    ),
  );

const siteFields = {
  name: z.string().check(z.minLength(1), z.maxLength(60), nameCharacters()),
  logo_url: link(),
  accent_color: z.string().check(z.regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour as #rrggbb')),
  favicon: link(),
  footer_html: text(4000),
  terms: text(50_000),
  privacy: text(50_000),
  channel_labels: z.object({ channel_a: label(), channel_b: label(), channel_c: label() }),
};

export const siteView = z.object({ version: z.number(), ...siteFields });

/** The whole site, and the version it was read at: a save over someone else's is 409. */
export const siteBody = z.object({ version: z.number().check(z.int(), z.minimum(0)), ...siteFields });
