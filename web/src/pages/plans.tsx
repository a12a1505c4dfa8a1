// Plans and purchase: pick a plan and a channel, pay (the mock cashier's page, or a channel's QR code),
// and watch the order until it is paid; usage against the quota above.
import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../action.tsx';
import { api, call, type DataOf } from '../api/client.ts';
import { QrCode } from '../qr.tsx';
import {
  DataTable,
  errorText,
  FormError,
  formatBytes,
  formatMoney,
  formatTime,
  Page,
  Status,
  useLoad,
} from '../ui.tsx';
import { Usage } from './files.tsx';

type Order = DataOf<'/api/v1/orders/{id}', 'get'>;
type Quote = DataOf<'/api/v1/coupons/validate', 'post'>;
/** What a buyer can choose; `free` is what an order a coupon made free shows. */
type Provider = Exclude<Order['provider'], 'free'>;

const PROVIDER_NAMES: Record<Order['provider'], string> = {
  free: 'Free (a coupon)',
  mock: 'Mock cashier',
  manual: 'Manual (an administrator confirms)',
  channel_a: 'Channel A (scan to pay)',
  channel_b: 'Channel B (scan to pay)',
  channel_c: 'Channel C',
};

const POLL_MS = 2000;

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
export function OrderCells({
  order,
}: {
  order: Pick<
    Order,
    | 'plan_name'
    | 'amount_cents'
    | 'discount_cents'
    | 'coupon_code'
    | 'provider'
    | 'status'
    | 'refunded_cents'
    | 'refunds'
    | 'created_at'
  >;
}) {
  return (
    <>
      <td>{order.plan_name}</td>
      <td>
        {formatMoney(order.amount_cents)}
        {order.coupon_code ? ` (${order.coupon_code}: ${formatMoney(order.discount_cents)} off)` : ''}
      </td>
      <td>{order.provider}</td>
      <td>{order.status}</td>
      <td>{refundedText(order)}</td>
      <td>{formatTime(order.created_at)}</td>
    </>
  );
}

function OrderPanel({ order, onPaid }: { order: Order; onPaid: () => void }) {
  const [current, setCurrent] = useState(order);
  const [error, setError] = useState('');
  useEffect(() => {
    if (current.status !== 'pending') return;
    const timer = setTimeout(async () => {
      try {
        const next = await call(api.GET('/api/v1/orders/{id}', { params: { path: { id: current.id } } }));
        setCurrent(next);
        setError('');
        if (next.status === 'paid') onPaid();
      } catch (caught) {
        setError(errorText(caught));
        setCurrent({ ...current });
      }
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [current]);

  return (
    <section class="secret" aria-labelledby="order-title">
      <h2 id="order-title">
        Order for {current.plan_name}: {formatMoney(current.amount_cents)}
      </h2>
      <Status message={`Order status: ${current.status}`} />
      {current.status === 'pending' && current.provider === 'mock' && current.pay_url && (
        <p>
          <a class="button" href={current.pay_url} target="_blank" rel="noopener">
            Open the mock cashier
          </a>{' '}
          (a new tab; this page updates when the order is paid)
        </p>
      )}
      {current.status === 'pending' && current.qr_code && (
        <figure>
          <QrCode text={current.qr_code} label={`Payment QR code for ${current.plan_name}`} />
          <figcaption>Scan with the payment app.</figcaption>
        </figure>
      )}
      {current.status === 'pending' && current.provider !== 'mock' && current.pay_url && (
        <p>
          <a href={current.pay_url} target="_blank" rel="noopener">
            Open the payment page
          </a>
        </p>
      )}
      {current.status === 'pending' && current.provider === 'manual' && (
        <p>An administrator confirms this order once your transfer arrives.</p>
      )}
      {error && <FormError message={error} />}
    </section>
  );
}

export function PlansPage() {
  const plans = useLoad(() => call(api.GET('/api/v1/plans')));
  const gateways = useLoad(() => call(api.GET('/api/v1/payment-gateways')));
  const [usageVersion, setUsageVersion] = useState(0);
  const orders = useLoad(() => call(api.GET('/api/v1/orders')), [usageVersion]);
  const [provider, setProvider] = useState<Provider | ''>('');
  const [order, setOrder] = useState<Order | null>(null);
  const chosen = provider || gateways.data?.[0] || 'mock';
  const action = useAction(() => undefined);
  // A coupon code, checked against each plan on sale before paying (POST /api/v1/coupons/validate).
  const [couponInput, setCouponInput] = useState('');
  const [coupon, setCoupon] = useState<{ code: string; quotes: Record<string, Quote | string> } | null>(null);
  const applyCoupon = async () => {
    const code = couponInput.trim();
    if (!code) {
      setCoupon(null);
      return;
    }
    const quotes: Record<string, Quote | string> = {};
    for (const plan of plans.data?.filter((item) => item.active) ?? []) {
      try {
        quotes[plan.id] = await call(
          api.POST('/api/v1/coupons/validate', { body: { code, plan_id: plan.id } }),
        );
      } catch (caught) {
        quotes[plan.id] = errorText(caught);
      }
    }
    setCoupon({ code, quotes });
  };
  const buy = (planId: string) =>
    action.run(async () => {
      const quote = coupon?.quotes[planId];
      const couponCode = quote && typeof quote !== 'string' ? coupon!.code : undefined;
      setOrder(
        await call(
          api.POST('/api/v1/orders', {
            body: { plan_id: planId, provider: chosen, ...(couponCode ? { coupon_code: couponCode } : {}) },
          }),
        ),
      );
      if (couponCode) setUsageVersion((value) => value + 1);
    });

  return (
    <Page title="Plans and usage">
      <h2>Usage</h2>
      <Usage key={usageVersion} />
      <h2>Plans</h2>
      {(plans.error || gateways.error) && <FormError message={plans.error || gateways.error} />}
      {gateways.data && gateways.data.length > 1 && (
        <div class="field">
          <label for="provider">Pay with</label>
          <select
            id="provider"
            value={chosen}
            onChange={(event) => setProvider((event.target as HTMLSelectElement).value as Provider)}
          >
            {gateways.data.map((name) => (
              <option key={name} value={name}>
                {PROVIDER_NAMES[name]}
              </option>
            ))}
          </select>
        </div>
      )}
      <div class="field">
        <label for="coupon">Coupon code</label>
        <input
          id="coupon"
          value={couponInput}
          onInput={(event) => setCouponInput((event.target as HTMLInputElement).value)}
        />
        <button type="button" class="secondary" onClick={applyCoupon}>
          Apply coupon
        </button>
      </div>
      <ul class="plans">
        {plans.data
          ?.filter((plan) => plan.active)
          .map((plan) => (
            <li class="card" key={plan.id}>
              <h3>{plan.name}</h3>
              {plan.description && <p>{plan.description}</p>}
              <p class="meta">
                {formatMoney(plan.amount_cents)} · quota {formatBytes(plan.quota_bytes)}
                {plan.duration_days ? ` · ${plan.duration_days} days` : ''}
              </p>
              {coupon?.quotes[plan.id] !== undefined && (
                <p class="meta" aria-live="polite">
                  {typeof coupon.quotes[plan.id] === 'string'
                    ? `${coupon.code}: ${coupon.quotes[plan.id] as string}`
                    : `With ${coupon.code}: ${formatMoney((coupon.quotes[plan.id] as Quote).final_cents)} (${formatMoney((coupon.quotes[plan.id] as Quote).discount_cents)} off)`}
                </p>
              )}
              <button type="button" onClick={() => buy(plan.id)}>
                Buy<span class="visually-hidden"> {plan.name}</span>
              </button>
            </li>
          ))}
      </ul>
      {plans.data && plans.data.length === 0 && <p>No plans on sale.</p>}
      {action.view}
      {order && (
        <OrderPanel key={order.id} order={order} onPaid={() => setUsageVersion((value) => value + 1)} />
      )}
      <h2>Your orders</h2>
      {orders.data && (
        <DataTable columns={ORDER_COLUMNS}>
          {orders.data.items.map((row) => (
            <tr key={row.id}>
              <OrderCells order={row} />
            </tr>
          ))}
        </DataTable>
      )}
    </Page>
  );
}
