// Plans and purchase: pick a plan and a channel, pay (the mock cashier's page, or a channel's QR code),
// and watch the order until it is paid; a pending order is paid later from the orders list, or cancelled;
// usage against the quota above.
import { useEffect, useRef, useState } from 'preact/hooks';
import { type Action, useAction } from '../action.tsx';
import { ApiError, api, byId, call, type DataOf } from '../api/client.ts';
import { ORDER_COLUMNS, type Order, OrderCells } from '../order-cells.tsx';
import { QrCode } from '../qr.tsx';
import { channelName, type Site, useSite } from '../site.ts';
import {
  errorText,
  FormError,
  formatMoney,
  ListState,
  ListTable,
  listPhase,
  Notice,
  Page,
  planStorage,
  useLoad,
} from '../ui.tsx';
import { Usage } from '../usage.tsx';

type PlanQuote = Extract<DataOf<'/api/v1/coupons/validate', 'post'>, { plans: unknown }>['plans'][number];
/** What a buyer can choose; `free` is what an order a coupon made free shows. */
type Provider = Exclude<Order['provider'], 'free'>;

const PROVIDER_NAMES: Record<Order['provider'], string> = {
  free: 'Free (a coupon)',
  mock: 'Mock cashier',
  manual: 'Manual (an administrator confirms)',
  channel_a: 'Alipay',
  channel_b: 'WeChat Pay',
  channel_c: 'EPay',
};
/** A channel by the name the site gives it (docs/DEPLOYMENT.md "Branding"), else its usual one. */
const providerName = (name: Order['provider'], site: Site | undefined) =>
  channelName(name, site) ?? PROVIDER_NAMES[name];

const POLL_MS = 2000;

/** How an order's state reads in its panel (others, such as failed or expired, are warnings). */
const ORDER_TONES: Partial<Record<string, 'success' | 'info' | 'warning'>> = {
  paid: 'success',
  pending: 'info',
};

/** What a plan gives: its storage and for how long (a plan without a quota changes no storage). */
function planTerms(plan: { quota_bytes: number | null; duration_days: number }): string {
  if (plan.quota_bytes === null) return planStorage(null);
  return `${planStorage(plan.quota_bytes)}, ${plan.duration_days ? `for ${plan.duration_days} days` : 'permanent'}`;
}

/**
 * A pending order's actions in the orders list: "Pay" opens its payment again (read afresh: a mock order's
 * cashier link is signed anew on every read), "Cancel" asks first, then cancels it
 * (docs/PAYMENTS-GUIDE.md "State machine").
 */
function PendingOrderActions({
  order,
  action,
  onPay,
  onCancelled,
}: {
  order: Order;
  action: Action;
  onPay: (order: Order) => void;
  onCancelled: (id: string) => void;
}) {
  const [asking, setAsking] = useState(false);
  const label = `order for ${order.plan_name} (${formatMoney(order.amount_cents)})`;
  const path = byId(order.id);
  if (asking) {
    return (
      <span class="confirm">
        <span>Cancel the {label}?</span>
        <button
          type="button"
          onClick={() =>
            action.run(async () => {
              await call(api.POST('/api/v1/orders/{id}/cancel', path));
              setAsking(false);
              onCancelled(order.id);
            }, `The ${label} is cancelled`)
          }
        >
          Cancel order<span class="visually-hidden"> {order.id}</span>
        </button>
        <button type="button" class="secondary" onClick={() => setAsking(false)}>
          Keep it<span class="visually-hidden"> order {order.id}</span>
        </button>
      </span>
    );
  }
  return (
    <span class="order-actions">
      {order.provider !== 'manual' && (
        <button
          type="button"
          onClick={() => action.run(async () => onPay(await call(api.GET('/api/v1/orders/{id}', path))))}
        >
          Pay<span class="visually-hidden"> {label}</span>
        </button>
      )}
      <button type="button" class="secondary" onClick={() => setAsking(true)}>
        Cancel<span class="visually-hidden"> {label}</span>
      </button>
    </span>
  );
}

function OrderPanel({ order, onPaid }: { order: Order; onPaid: () => void }) {
  const [current, setCurrent] = useState(order);
  const [error, setError] = useState('');
  const title = useRef<HTMLHeadingElement>(null);
  // Opened from the orders list below: the panel is where the eye and the screen reader go next.
  useEffect(() => {
    title.current?.focus();
    title.current?.scrollIntoView?.({ block: 'nearest' });
  }, []);
  useEffect(() => {
    if (current.status !== 'pending') return;
    const timer = setTimeout(async () => {
      try {
        const next = await call(api.GET('/api/v1/orders/{id}', byId(current.id)));
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
      <h2 id="order-title" tabIndex={-1} ref={title}>
        Order for {current.plan_name}: {formatMoney(current.amount_cents)}
      </h2>
      {/* Green only once paid: a pending order is waiting, not done; any other end is a warning. */}
      <Notice tone={ORDER_TONES[current.status] ?? 'warning'}>Order status: {current.status}</Notice>
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
  const site = useSite();
  const plans = useLoad(() => call(api.GET('/api/v1/plans')));
  const gateways = useLoad(() => call(api.GET('/api/v1/payment-gateways')));
  const [usageVersion, setUsageVersion] = useState(0);
  const orders = useLoad(() => call(api.GET('/api/v1/orders')), [usageVersion]);
  const [provider, setProvider] = useState<Provider | ''>('');
  const [order, setOrder] = useState<Order | null>(null);
  // Each opening of an order's payment is a fresh panel, even of the order already shown.
  const [opened, setOpened] = useState(0);
  const openOrder = (next: Order | null) => {
    setOrder(next);
    setOpened((count) => count + 1);
  };
  const chosen = provider || gateways.data?.[0] || 'mock';
  const action = useAction(() => undefined);
  const orderAction = useAction(orders.reload);
  // A coupon code, checked once against every plan on sale before paying (POST /api/v1/coupons/validate
  // without a plan): each plan it takes something off shows its price; an unusable code is one message by
  // the field. Editing the field drops what the last code said.
  const [couponInput, setCouponInput] = useState('');
  const [coupon, setCoupon] = useState<{ code: string; quotes: Record<string, PlanQuote> } | null>(null);
  const [couponError, setCouponError] = useState('');
  const editCoupon = (value: string) => {
    setCouponInput(value);
    setCoupon(null);
    setCouponError('');
  };
  const applyCoupon = async () => {
    const code = couponInput.trim();
    editCoupon(couponInput);
    if (!code) return;
    try {
      const quote = await call(api.POST('/api/v1/coupons/validate', { body: { code } }));
      const plans = 'plans' in quote ? quote.plans : [];
      setCoupon({ code, quotes: Object.fromEntries(plans.map((plan) => [plan.plan_id, plan])) });
    } catch (caught) {
      const unusable = caught instanceof ApiError && caught.status === 400;
      setCouponError(unusable ? `No usable coupon named ${code.toUpperCase()}` : errorText(caught));
    }
  };
  const buy = (planId: string) =>
    action.run(async () => {
      const couponCode = coupon?.quotes[planId] ? coupon.code : undefined;
      openOrder(
        await call(
          api.POST('/api/v1/orders', {
            body: { plan_id: planId, provider: chosen, ...(couponCode ? { coupon_code: couponCode } : {}) },
          }),
        ),
      );
      // The new order joins the list (pending: payable and cancellable there); a free one changed the usage.
      if (couponCode) setUsageVersion((value) => value + 1);
      else await orders.reload();
    });

  return (
    <Page title="Plans and usage">
      <h2>Usage</h2>
      <Usage key={usageVersion} />
      <h2>Plans</h2>
      {(plans.error || gateways.error) && <FormError message={plans.error || gateways.error} />}
      <ListState
        phase={listPhase(plans, plans.data?.filter((plan) => plan.active).length ?? 0)}
        empty="No plans on sale."
        hint="Plans appear here when an administrator puts one on sale."
      />
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
                {providerName(name, site)}
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
          onInput={(event) => editCoupon((event.target as HTMLInputElement).value)}
        />
        <button type="button" class="secondary" onClick={applyCoupon}>
          Apply coupon
        </button>
        <p class="meta" aria-live="polite">
          {couponError}
        </p>
      </div>
      <ul class="plans">
        {plans.data
          ?.filter((plan) => plan.active)
          .map((plan) => (
            <li class="card" key={plan.id}>
              <h3>{plan.name}</h3>
              {plan.description && <p>{plan.description}</p>}
              <p class="meta">
                {formatMoney(plan.amount_cents)} · {planTerms(plan)}
              </p>
              {coupon?.quotes[plan.id] && (
                <p class="meta">{`With ${coupon.code}: ${formatMoney(coupon.quotes[plan.id]!.final_cents)} (${formatMoney(coupon.quotes[plan.id]!.discount_cents)} off)`}</p>
              )}
              <button type="button" onClick={() => buy(plan.id)}>
                Buy<span class="visually-hidden"> {plan.name}</span>
              </button>
            </li>
          ))}
      </ul>
      {action.view}
      {order && (
        <OrderPanel
          key={`${order.id}-${opened}`}
          order={order}
          onPaid={() => setUsageVersion((value) => value + 1)}
        />
      )}
      <h2>Your orders</h2>
      {orderAction.view}
      <ListTable
        list={orders}
        items={orders.data?.items}
        columns={ORDER_COLUMNS}
        actions
        empty="No orders yet."
        hint="Buy a plan above; its order is listed here, and a pending one can be paid or cancelled."
        row={(row) => (
          <tr key={row.id}>
            <OrderCells order={row} />
            <td>
              {row.status === 'pending' && (
                <PendingOrderActions
                  order={row}
                  action={orderAction}
                  onPay={openOrder}
                  onCancelled={(id) => {
                    if (order?.id === id) openOrder(null);
                    setUsageVersion((value) => value + 1);
                  }}
                />
              )}
            </td>
          </tr>
        )}
      />
    </Page>
  );
}
