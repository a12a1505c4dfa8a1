// The back office's coupons (docs/PAYMENTS-GUIDE.md "Coupons"): the form that makes one, and the list with
// each coupon's uses, switching it off or on, and deleting it.
import { useId } from 'preact/hooks';
import { ActionButton, useAction } from '../action.tsx';
import { api, byId, call, type DataOf, FIRST_100 } from '../api/client.ts';
import { Field, useForm } from '../form.tsx';
import { FormError, formatMoney, ListTable, Page, useLoad } from '../ui.tsx';

type Coupon = DataOf<'/api/v1/admin/coupons', 'get'>['items'][number];

const switchCoupon = (coupon: Coupon) =>
  call(api.PATCH('/api/v1/admin/coupons/{id}', { ...byId(coupon.id), body: { active: !coupon.active } }));

function discountText(coupon: Coupon): string {
  return coupon.percent_off !== null
    ? `${coupon.percent_off}% off`
    : `${formatMoney(coupon.amount_off_cents ?? 0)} off`;
}

/** A new coupon: a percentage or an amount in cents (one of them), and its optional limits. */
function CouponForm({ onSaved }: { onSaved: () => Promise<unknown> | unknown }) {
  const titleId = useId();
  const form = useForm({
    code: '',
    percent_off: '',
    amount_off_cents: '',
    max_redemptions: '',
    per_account_limit: '',
  });
  const save = form.submit(async (values) => {
    const number = (text: string) => (text.trim() ? Number(text) : undefined);
    await call(
      api.POST('/api/v1/admin/coupons', {
        body: {
          code: values.code.trim(),
          percent_off: number(values.percent_off),
          amount_off_cents: number(values.amount_off_cents),
          max_redemptions: number(values.max_redemptions),
          per_account_limit: number(values.per_account_limit),
        },
      }),
    );
    form.reset();
    await onSaved();
  });
  return (
    <form onSubmit={save} noValidate aria-labelledby={titleId}>
      <h2 id={titleId}>New coupon</h2>
      <Field
        form={form}
        name="code"
        label="Code"
        hint="3 to 32 letters, digits, _ or -; case does not matter"
      />
      <Field form={form} name="percent_off" label="Percent off (1 to 100)" inputMode="numeric" />
      <Field form={form} name="amount_off_cents" label="Or an amount off, in cents" inputMode="numeric" />
      <Field form={form} name="max_redemptions" label="Uses in all (empty: no limit)" inputMode="numeric" />
      <Field form={form} name="per_account_limit" label="Uses per account (empty: 1)" inputMode="numeric" />
      <div class="actions">
        <button type="submit" disabled={form.busy}>
          Create coupon
        </button>
      </div>
      {form.formError && <FormError message={form.formError} />}
    </form>
  );
}

export function AdminCoupons() {
  const coupons = useLoad(() => call(api.GET('/api/v1/admin/coupons', FIRST_100)));
  const action = useAction(coupons.reload);
  return (
    <Page title="Coupons">
      {action.view}
      <ListTable
        list={coupons}
        items={coupons.data?.items}
        columns={['Code', 'Discount', 'Used', 'Per account', 'Active']}
        actions
        empty="No coupons yet."
        hint="Make one with the form below."
        row={(coupon) => (
          <tr key={coupon.id}>
            <td>{coupon.code}</td>
            <td>{discountText(coupon)}</td>
            <td>
              {coupon.redemptions}
              {coupon.max_redemptions !== null ? ` of ${coupon.max_redemptions}` : ''}
            </td>
            <td>{coupon.per_account_limit}</td>
            <td>{coupon.active ? 'yes' : 'no'}</td>
            <td class="actions">
              <ActionButton
                action={action}
                work={() => switchCoupon(coupon)}
                done={`${coupon.code} ${coupon.active ? 'switched off' : 'switched on'}`}
              >
                {coupon.active ? 'Switch off' : 'Switch on'}
                <span class="visually-hidden"> {coupon.code}</span>
              </ActionButton>
              <ActionButton
                action={action}
                work={() => call(api.DELETE('/api/v1/admin/coupons/{id}', byId(coupon.id)))}
                done={`${coupon.code} deleted`}
              >
                Delete<span class="visually-hidden"> {coupon.code}</span>
              </ActionButton>
            </td>
          </tr>
        )}
      />
      <CouponForm onSaved={coupons.reload} />
    </Page>
  );
}
