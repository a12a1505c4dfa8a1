// The back office's orders: every account's, newest first, and the manual write-off of a pending manual
// order once the transfer has arrived.
import { useState } from 'preact/hooks';
import { type Action, ActionButton, useAction } from '../action.tsx';
import { api, call } from '../api/client.ts';
import { DataTable, FormError, Page, useLoad } from '../ui.tsx';
import { ORDER_COLUMNS, OrderCells } from './plans.tsx';

/**
 * Refunds a paid order (docs/PAYMENTS-GUIDE.md "Refunds"): an amount in cents (empty: all that is left) and
 * a reason. One Idempotency-Key per refund typed here, so a double click refunds once.
 */
function RefundControls({ orderId, action }: { orderId: string; action: Action }) {
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [key, setKey] = useState(() => crypto.randomUUID());
  const refund = () =>
    action.run(async () => {
      await call(
        api.POST('/api/v1/admin/orders/{id}/refund', {
          params: { path: { id: orderId } },
          headers: { 'idempotency-key': key },
          body: { reason, ...(amount.trim() ? { amount_cents: Number(amount) } : {}) },
        }),
      );
      setKey(crypto.randomUUID());
      setAmount('');
      setReason('');
    }, `Order ${orderId} refunded`);
  return (
    <span class="refund">
      <label>
        Refund cents<span class="visually-hidden"> of order {orderId}</span>
        <input
          size={6}
          inputMode="numeric"
          value={amount}
          onInput={(event) => setAmount((event.target as HTMLInputElement).value)}
        />
      </label>
      <label>
        Reason<span class="visually-hidden"> for order {orderId}</span>
        <input value={reason} onInput={(event) => setReason((event.target as HTMLInputElement).value)} />
      </label>
      <button type="button" class="secondary" onClick={refund}>
        Refund<span class="visually-hidden"> order {orderId}</span>
      </button>
    </span>
  );
}

export function AdminOrders() {
  const orders = useLoad(() =>
    call(api.GET('/api/v1/admin/orders', { params: { query: { limit: '100' } } })),
  );
  const action = useAction(orders.reload);
  return (
    <Page title="Orders">
      {orders.error && <FormError message={orders.error} />}
      {action.view}
      <DataTable columns={ORDER_COLUMNS} actions>
        {orders.data?.items.map((order) => (
          <tr key={order.id}>
            <OrderCells order={order} />
            <td>
              {order.provider === 'manual' && order.status === 'pending' && (
                <ActionButton
                  action={action}
                  primary
                  work={() =>
                    call(api.POST('/api/v1/admin/orders/{id}/pay', { params: { path: { id: order.id } } }))
                  }
                  done={`Order ${order.id} written off as paid`}
                >
                  Write off<span class="visually-hidden"> order {order.id}</span>
                </ActionButton>
              )}
              {order.status === 'paid' && order.provider !== 'free' && (
                <RefundControls orderId={order.id} action={action} />
              )}
            </td>
          </tr>
        ))}
      </DataTable>
    </Page>
  );
}
