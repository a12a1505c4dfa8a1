// An order's cells in a table of orders: the account's own list (Plans and usage) and the back office's.
import type { DataOf } from './api/client.ts';
import { channelName, useSite } from './site.ts';
import { formatMoney, formatTime } from './ui.tsx';

export type Order = DataOf<'/api/v1/orders/{id}', 'get'>;

export const ORDER_COLUMNS = ['Plan', 'Amount', 'Channel', 'Status', 'Refunded', 'Created'];

/** What was refunded of an order, and each refund's state (docs/PAYMENTS-GUIDE.md "Refunds"). */
function refundedText(order: Pick<Order, 'refunded_cents' | 'refunds'>): string {
  if (order.refunds.length === 0) return '—';
  const each = order.refunds
    .map((refund) => `${formatMoney(refund.amount_cents)} ${refund.status}`)
    .join(', ');
  return `${formatMoney(order.refunded_cents)} (${each})`;
}

/** An order's cells in a table of orders; the account's own list and the back office's show the same. */
export function OrderCells({ order }: { order: Order }) {
  const site = useSite();
  return (
    <>
      <td>{order.plan_name}</td>
      <td>
        {formatMoney(order.amount_cents)}
        {order.coupon_code ? ` (${order.coupon_code}: ${formatMoney(order.discount_cents)} off)` : ''}
      </td>
      <td>{channelName(order.provider, site) ?? order.provider}</td>
      <td>{order.status}</td>
      <td>{refundedText(order)}</td>
      <td>{formatTime(order.created_at)}</td>
    </>
  );
}
