// The hosted mock cashier's two requests (docs/DESIGN.md 7): show the order behind a signed link, and pay it
// there. Every refusal is a page, not an envelope: a browser is on the other end.
import { TokenError } from '#lib/accounts/tokens.ts';
import { AppError, errors, isRefusal } from '#lib/core/errors.ts';
import type { Clock } from '#lib/platform/db/table.ts';
import { type CashierLinks, cashierErrorPage, cashierPage } from './cashier.ts';
import { effectiveStatus, ORDER_ID_PATTERN, type StoredOrder } from './model.ts';
import type { OrderRepository } from './orders.ts';
import type { GatewaySource } from './registry.ts';
import { requireMockCashier, type Settlement } from './settlement.ts';

/** A page to show; with `refusal`, the page explains why the request was refused (the edge sets its status). */
export interface PageResult {
  html: string;
  refusal?: AppError;
}

export interface MockCashierDeps {
  orders: OrderRepository;
  gateways: GatewaySource;
  cashier: CashierLinks;
  settlement: Settlement;
  clock: Clock;
  /** The site's name, which the pages carry. */
  siteName: () => Promise<string>;
}

export class MockCashier {
  constructor(private readonly deps: MockCashierDeps) {}

  /** GET /pay/mock/{id}?token=...: the order, its amount and a Pay button. */
  async openCashier(id: string, token: string | undefined): Promise<PageResult> {
    const site = await this.deps.siteName();
    const found = await this.cashierOrder(id, token, site);
    if ('page' in found) return found.page;
    const status = effectiveStatus(found.order, this.deps.clock());
    return { html: cashierPage(found.order, status, cashierAction(id, token!), site) };
  }

  /** POST /pay/mock/{id}?token=...: settles like POST /api/v1/orders/{id}/pay. */
  async payAtCashier(id: string, token: string | undefined): Promise<PageResult> {
    const site = await this.deps.siteName();
    const found = await this.cashierOrder(id, token, site);
    if ('page' in found) return found.page;
    try {
      const { order } = await this.deps.settlement.confirm(found.order, 'owner');
      return { html: cashierPage(order, 'paid', cashierAction(id, token!), site, 'Payment received.') };
    } catch (error) {
      // A refusal (conflict, forbidden) shows the order as it now is; a failure of ours stays an error.
      if (error instanceof AppError && isRefusal(error)) {
        const current = (await this.deps.orders.get(id)) ?? found.order;
        return {
          refusal: error,
          html: cashierPage(current, effectiveStatus(current, this.deps.clock()), '', site, error.message),
        };
      }
      throw error;
    }
  }

  /** The order the link was signed for, if its owner may still use the cashier; else the refusal page. */
  private async cashierOrder(
    id: string,
    token: string | undefined,
    site: string,
  ): Promise<{ order: StoredOrder } | { page: PageResult }> {
    const now = this.deps.clock();
    let userId: string;
    try {
      ({ userId } = await this.deps.cashier.verify(id, token, now));
    } catch (error) {
      if (!(error instanceof TokenError)) throw error;
      return {
        page: {
          refusal: error,
          html: cashierErrorPage('This payment link is invalid or has expired.', site),
        },
      };
    }
    const order = ORDER_ID_PATTERN.test(id) ? await this.deps.orders.get(id) : undefined;
    if (!order || order.user_id !== userId) {
      return {
        page: {
          refusal: errors.notFound('Order not found'),
          html: cashierErrorPage('Order not found.', site),
        },
      };
    }
    try {
      await requireMockCashier(order, this.deps.gateways);
    } catch (error) {
      if (error instanceof AppError) {
        return { page: { refusal: error, html: cashierErrorPage(error.message, site) } };
      }
      throw error;
    }
    return { order };
  }
}

function cashierAction(id: string, token: string): string {
  return `/pay/mock/${id}?token=${encodeURIComponent(token)}`;
}
