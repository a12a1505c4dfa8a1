// The back office's orders: every account's, newest first, and the manual write-off of a pending manual
// order once the transfer has arrived.
import { useAction } from '../action.tsx';
import { api, call } from '../api/client.ts';
import { DataTable, FormError, formatMoney, formatTime, Page, useLoad } from '../ui.tsx';

export function AdminOrders() {
  const orders = useLoad(() =>
    call(api.GET('/api/v1/admin/orders', { params: { query: { limit: '100' } } })),
  );
  const action = useAction(orders.reload);
  return (
    <Page title="Orders">
      {orders.error && <FormError message={orders.error} />}
      {action.view}
      <DataTable columns={['Plan', 'Amount', 'Channel', 'Status', 'Created']} actions>
        {orders.data?.items.map((order) => (
          <tr key={order.id}>
            <td>{order.plan_name}</td>
            <td>{formatMoney(order.amount_cents)}</td>
            <td>{order.provider}</td>
            <td>{order.status}</td>
            <td>{formatTime(order.created_at)}</td>
            <td>
              {order.provider === 'manual' && order.status === 'pending' && (
                <button
                  type="button"
                  onClick={() =>
                    action.run(
                      () =>
                        call(
                          api.POST('/api/v1/admin/orders/{id}/pay', {
                            params: { path: { id: order.id } },
                          }),
                        ),
                      `Order ${order.id} written off as paid`,
                    )
                  }
                >
                  Write off<span class="visually-hidden"> order {order.id}</span>
                </button>
              )}
            </td>
          </tr>
        ))}
      </DataTable>
    </Page>
  );
}
