// The operator's site (docs/DEPLOYMENT.md "Branding"): its name, logo, accent colour, favicon, footer, terms
// and privacy pages and the payment channels' names, as one versioned item in the table with a tiny version
// item read on every request (as the payment settings are); until an administrator first saves it, the
// configured `site.name` and defaults, never written by a read. The one route that saves it sanitizes the
// footer first (lib/platform/site/footer.ts), so the groups that only read the site carry no HTML sanitizer.
import { errors } from '#lib/core/errors.ts';
import { conditionFailedAs, type Table } from '#lib/platform/db/table.ts';
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

  /**
   * The site as saved: one tiny read while this container's copy is current, the item when it is not; the
   * configured defaults (version 0) until an administrator first saves it. A read never writes: a visitor's
   * page view leaves the table as it was.
   */
  async current(): Promise<VersionedSite> {
    const version = await this.deps.table.get<{ version: number }>(SITE_VERSION_KEY);
    if (!version) return { version: 0, site: this.deps.seed() };
    if (this.cached?.version === version.version) return this.cached;
    this.cached = await this.read();
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
            // The first save (of the defaults, version 0) finds no version item.
            ConditionExpression: expectedVersion === 0 ? 'attribute_not_exists(pk)' : 'version = :expected',
            ExpressionAttributeValues: {
              ':next': version,
              ...(expectedVersion === 0 ? {} : { ':expected': expectedVersion }),
            },
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
}
