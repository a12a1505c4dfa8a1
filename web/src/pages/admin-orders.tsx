// The back office's orders: every account's, newest first, with the buyer's username, and the manual
// write-off of a pending manual order once the transfer has arrived (asked again before it is done).
import { useState } from 'preact/hooks';
import { type Action, useAction } from '../action.tsx';
import { api, byId, call, type DataOf, FIRST_100 } from '../api/client.ts';
import { ORDER_COLUMNS, OrderCells } from '../order-cells.tsx';
import { formatMoney, ListTable, Page, useLoad } from '../ui.tsx';

type AdminOrder = DataOf<'/api/v1/admin/orders', 'get'>['items'][number];

/** Who bought it: the username, or the account id once the account is gone. */
const buyerOf = (order: AdminOrder) => order.username ?? `deleted account ${order.user_id}`;

/**
 * The write-off of a pending manual order: a first click asks "Mark order X of <buyer> paid: ¥N?", and only
 * the confirmation writes it off (docs/PAYMENTS-GUIDE.md "Orders in the back office").
 */
function WriteOff({ order, action }: { order: AdminOrder; action: Action }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" onClick={() => setAsking(true)}>
        Write off<span class="visually-hidden"> order {order.id}</span>
      </button>
    );
  }
  const question = `Mark order ${order.id} of ${buyerOf(order)} paid: ${formatMoney(order.amount_cents)}?`;
  return (
    <span class="confirm">
      <span>{question}</span>
      <button
        type="button"
        onClick={() =>
          action.run(
            async () => {
              await call(api.POST('/api/v1/admin/orders/{id}/pay', byId(order.id)));
              setAsking(false);
            },
            `Order ${order.id} of ${buyerOf(order)} written off as paid`,
          )
        }
      >
        Mark paid<span class="visually-hidden"> order {order.id}</span>
      </button>
      <button type="button" class="secondary" onClick={() => setAsking(false)}>
        Keep pending<span class="visually-hidden"> order {order.id}</span>
      </button>
    </span>
  );
}

/**
 * Refunds a paid order (docs/PAYMENTS-GUIDE.md "Refunds"): an amount in cents (empty: all that is left) and
 * a reason; a first click asks "Refund ¥N of order X to <buyer>?", naming the amount, and only the
 * confirmation refunds. One Idempotency-Key per refund typed here, so a double click refunds once.
 */
function RefundControls({ order, action }: { order: AdminOrder; action: Action }) {
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [asking, setAsking] = useState(false);
  const [key, setKey] = useState(() => crypto.randomUUID());
  const typed = amount.trim() ? Number(amount) : undefined;
  const refund = () =>
    action.run(async () => {
      await call(
        api.POST('/api/v1/admin/orders/{id}/refund', {
          ...byId(order.id),
          headers: { 'idempotency-key': key },
          body: { reason, ...(typed === undefined ? {} : { amount_cents: typed }) },
        }),
      );
      setKey(crypto.randomUUID());
      setAmount('');
      setReason('');
      setAsking(false);
    }, `Order ${order.id} refunded`);
  if (asking) {
    const cents = typed ?? order.amount_cents - order.refunded_cents;
    const whole = typed === undefined ? ' (all that is left)' : '';
    return (
      <span class="confirm">
        <span>{`Refund ${Number.isFinite(cents) ? formatMoney(cents) : amount}${whole} of order ${order.id} to ${buyerOf(order)}?`}</span>
        <button type="button" onClick={refund}>
          Confirm refund<span class="visually-hidden"> order {order.id}</span>
        </button>
        <button type="button" class="secondary" onClick={() => setAsking(false)}>
          Keep<span class="visually-hidden"> order {order.id}</span>
        </button>
      </span>
    );
  }
  return (
    <span class="refund">
      <label>
        Refund cents<span class="visually-hidden"> of order {order.id}</span>
        <input
          size={6}
          inputMode="numeric"
          placeholder="all that is left"
          value={amount}
          onInput={(event) => setAmount((event.target as HTMLInputElement).value)}
        />
      </label>
      <label>
        Reason<span class="visually-hidden"> for order {order.id}</span>
        <input value={reason} onInput={(event) => setReason((event.target as HTMLInputElement).value)} />
      </label>
      <button type="button" class="secondary" onClick={() => setAsking(true)}>
        Refund<span class="visually-hidden"> order {order.id}</span>
      </button>
    </span>
  );
}

export function AdminOrders() {
  const orders = useLoad(() => call(api.GET('/api/v1/admin/orders', FIRST_100)));
  const action = useAction(orders.reload);
  return (
    <Page title="Orders">
      {action.view}
      <ListTable
        list={orders}
        items={orders.data?.items}
        columns={['Buyer', ...ORDER_COLUMNS]}
        actions
        empty="No orders yet."
        hint="Orders appear here as soon as anyone buys a plan."
        row={(order) => (
          <tr key={order.id}>
            <td>{buyerOf(order)}</td>
            <OrderCells order={order} />
            <td>
              {order.provider === 'manual' && order.status === 'pending' && (
                <WriteOff order={order} action={action} />
              )}
              {order.status === 'paid' && order.provider !== 'free' && (
                <RefundControls order={order} action={action} />
              )}
            </td>
          </tr>
        )}
      />
    </Page>
  );
}
