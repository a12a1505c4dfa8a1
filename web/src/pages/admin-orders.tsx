// The back office's orders: every account's, newest first, and the manual write-off of a pending manual
// order once the transfer has arrived.
import { ActionButton, useAction } from '../action.tsx';
import { api, call } from '../api/client.ts';
import { DataTable, FormError, Page, useLoad } from '../ui.tsx';
import { ORDER_COLUMNS, OrderCells } from './plans.tsx';

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
            </td>
          </tr>
        ))}
      </DataTable>
    </Page>
  );
}
