// The operator's site (docs/DEPLOYMENT.md "Branding"): its name, logo, accent colour, favicon, footer, terms
// and privacy pages and the payment channels' names, as one versioned item in the table with a tiny version
// item read on every request (as the payment settings are); `site.name` of the config file written on the
// first read. The one route that saves it sanitizes the footer first (lib/platform/site/footer.ts), so the
// groups that only read the site carry no HTML sanitizer.
import { errors } from '#lib/core/errors.ts';
import { ConditionFailedError, conditionFailedAs, type Table } from '#lib/platform/db/table.ts';
import { isoWithOffset } from '#lib/platform/time.ts';

export interface SiteSettings {
  name: string;
  /** An https URL or a path on this origin; null: the name alone. */
  logo_url: string | null;
  /** `#rrggbb`. */
  accent_color: string;
  /** An https URL or a path on this origin; null: the console's own icon. */
  favicon: string | null;
  footer_html: string;
  /** Plain text shown at the console's #/terms and #/privacy; empty: no link. */
  terms: string;
  privacy: string;
  /** What buyers see for each payment channel. */
  channel_labels: { channel_a: string; channel_b: string; channel_c: string };
}

export interface VersionedSite {
  version: number;
  site: SiteSettings;
}

export const siteDefaults = (name: string): SiteSettings => ({
  name,
  logo_url: null,
  accent_color: '#0b57d0',
  favicon: null,
  footer_html: '',
  terms: '',
  privacy: '',
  channel_labels: { channel_a: 'Alipay', channel_b: 'WeChat Pay', channel_c: 'EPay' },
});

const SITE_KEY = { pk: 'settings#site', sk: 'settings' };
const SITE_VERSION_KEY = { pk: 'settings#site', sk: 'version' };

export interface SiteStoreDeps {
  table: Table;
  /** What the first read writes: the config file's `site`. */
  seed: () => SiteSettings;
}

export class SiteStore {
  private cached: VersionedSite | undefined;

  constructor(private readonly deps: SiteStoreDeps) {}

  /** The site as saved: one tiny read while this container's copy is current, the item when it is not. */
  async current(): Promise<VersionedSite> {
    const version = await this.deps.table.get<{ version: number }>(SITE_VERSION_KEY);
    if (version && this.cached?.version === version.version) return this.cached;
    this.cached = version ? await this.read() : await this.seedOnce();
    return this.cached;
  }

  /** Replaces the site if nobody saved since `expectedVersion` was read; 409 otherwise. */
  async save(site: SiteSettings, expectedVersion: number): Promise<VersionedSite> {
    const version = expectedVersion + 1;
    await this.deps.table
      .transact([
        {
          Update: {
            Key: SITE_VERSION_KEY,
            UpdateExpression: 'SET version = :next',
            ConditionExpression: 'version = :expected',
            ExpressionAttributeValues: { ':next': version, ':expected': expectedVersion },
          },
        },
        { Put: { Item: this.item(site, version) } },
      ])
      .catch(
        conditionFailedAs(() =>
          errors.conflict('version: the site was changed by another request; read it again'),
        ),
      );
    this.cached = { version, site };
    return this.cached;
  }

  private item(site: SiteSettings, version: number) {
    return { ...SITE_KEY, version, updated_at: isoWithOffset(this.deps.table.clock()), site };
  }

  private async read(): Promise<VersionedSite> {
    const item = await this.deps.table.get<{ version: number; site: SiteSettings }>(SITE_KEY);
    if (!item) return { version: 0, site: this.deps.seed() };
    // Fields added after the item was saved take their defaults.
    return { version: item.version, site: { ...siteDefaults(item.site.name), ...item.site } };
  }

  private async seedOnce(): Promise<VersionedSite> {
    const site = this.deps.seed();
    const absent = 'attribute_not_exists(pk)';
    try {
      await this.deps.table.transact([
        { Put: { Item: { ...SITE_VERSION_KEY, version: 1 }, ConditionExpression: absent } },
        { Put: { Item: this.item(site, 1), ConditionExpression: absent } },
      ]);
      return { version: 1, site };
    } catch (error) {
      // Another container wrote it first: theirs stands.
      if (error instanceof ConditionFailedError) return this.read();
      throw error;
    }
  }
}
