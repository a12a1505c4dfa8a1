// The hosted mock cashier (docs/DESIGN.md 7): a short-lived signed link to a small page with a Pay button.

import { TokenError, type TokenSigner } from '#lib/accounts/tokens.ts';
import { centsToYuan } from '#lib/billing/channels/money.ts';
import { escapeHtml } from '#lib/platform/html.ts';
import { DEFAULT_FAVICON } from '#lib/platform/site/favicon.ts';
import type { OrderStatus, StoredOrder } from './model.ts';

/** A cashier link lives at most this long; it is re-signed every time the order is read. */
export const CASHIER_LINK_SECONDS = 15 * 60;

export interface CashierLinksDeps {
  signer: TokenSigner;
  baseUrl: string;
}

export class CashierLinks {
  constructor(private readonly deps: CashierLinksDeps) {}

  /** `{base_url}/pay/mock/{id}?token=...`, valid until the order's deadline or 15 minutes, whichever is first. */
  async linkFor(order: StoredOrder, now: Date): Promise<string | null> {
    const secondsLeft = Math.floor((order.deadline_ms - now.getTime()) / 1000);
    if (secondsLeft <= 0) return null;
    const { token } = await this.deps.signer.sign(
      { sub: order.id, scope: 'mock_cashier', uid: order.user_id },
      Math.min(CASHIER_LINK_SECONDS, secondsLeft),
      now,
    );
    return `${this.deps.baseUrl}/pay/mock/${order.id}?token=${encodeURIComponent(token)}`;
  }

  /** The owner the link was signed for, or the reason it is refused. */
  async verify(orderId: string, token: string | undefined, now: Date): Promise<{ userId: string }> {
    if (!token) throw new TokenError('invalid');
    const claims = await this.deps.signer.verify(token, 'mock_cashier', now);
    if (claims.sub !== orderId || typeof claims.uid !== 'string') throw new TokenError('invalid');
    return { userId: claims.uid };
  }
}

/** Pages send no script and load nothing; the form may post only back to this service. */
export const CASHIER_PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'cache-control': 'no-store',
});

const STATUS_TEXT: Record<OrderStatus, string> = {
  pending: 'Awaiting payment',
  paid: 'Paid',
  cancelled: 'Cancelled',
  expired: 'Expired',
  failed: 'Failed',
  refunded: 'Refunded',
};

/** The page, named after the site (docs/DEPLOYMENT.md "Branding") in its title and above its card. */
function page(title: string, site: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(`${title} · ${site}`)}</title>
<link rel="icon" href="${DEFAULT_FAVICON}">
<style>
body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
.card{border:1px solid #ddd;border-radius:8px;padding:1.5rem}
.amount{font-size:2rem;font-weight:600;margin:.5rem 0}
.note{color:#666;font-size:.85rem}
.site{font-weight:600}
button{font-size:1.1rem;padding:.6rem 1.6rem;border:0;border-radius:6px;background:#1677ff;color:#fff;cursor:pointer}
</style>
</head>
<body>
<p class="site">${escapeHtml(site)}</p>
${body}
</body>
</html>
`;
}

export function cashierPage(
  order: StoredOrder,
  status: OrderStatus,
  formAction: string,
  site: string,
  message?: string,
): string {
  const amount = `¥${centsToYuan(order.amount_cents)}`;
  const form =
    status === 'pending'
      ? `<form method="post" action="${escapeHtml(formAction)}"><button type="submit" id="pay">Pay ${escapeHtml(amount)}</button></form>`
      : '';
  return page(
    `Mock cashier: ${order.plan_name}`,
    site,
    `<main class="card">
<p class="note">Mock cashier (development only): no money moves.</p>
<h1 id="plan">${escapeHtml(order.plan_name)}</h1>
<p class="amount" id="amount">${escapeHtml(amount)}</p>
<p>Order <code>${escapeHtml(order.id)}</code></p>
<p>Status: <strong id="status" data-status="${status}">${STATUS_TEXT[status]}</strong></p>
${message ? `<p id="message">${escapeHtml(message)}</p>` : ''}
${form}
</main>`,
  );
}

export function cashierErrorPage(message: string, site: string): string {
  return page(
    'Mock cashier',
    site,
    `<main class="card"><h1>Cannot open this payment</h1><p id="message">${escapeHtml(message)}</p></main>`,
  );
}
