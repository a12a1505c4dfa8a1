// The back office's plans: the list (edit, put on sale or withdraw, delete) and the form that makes a new
// plan or edits one.
import { useId, useState } from 'preact/hooks';
import { ActionButton, useAction } from '../action.tsx';
import { api, byId, call, type DataOf } from '../api/client.ts';
import { Field, useForm } from '../form.tsx';
import { FormError, formatBytes, formatMoney, ListTable, Page, Status, useLoad } from '../ui.tsx';

type Plan = DataOf<'/api/v1/admin/plans', 'get'>[number];
type Position = NonNullable<Plan['watermark']>['position'];

const POSITIONS: Position[] = ['bottom-right', 'bottom-left', 'top-right', 'top-left', 'center'];

/** The form's watermark fields as the API takes them: null when neither a text nor an image is given. */
function watermarkOf(values: Record<string, string>): Plan['watermark'] {
  if (!values.mark_text && !values.mark_image) return null;
  return {
    ...(values.mark_image ? { image: values.mark_image } : { text: values.mark_text }),
    position: values.mark_position as Position,
    opacity: Number(values.mark_opacity),
    min_size: Number(values.mark_min_size || 0),
  };
}

const switchPlan = (plan: Plan) =>
  call(api.PATCH('/api/v1/admin/plans/{id}', { ...byId(plan.id), body: { active: !plan.active } }));

/**
 * A plan's fields as an administrator types them: the price in cents, the quota in GiB (empty: the plan
 * grants no storage, and its buyers keep the quota they have), the duration in days (empty: permanent). New when `plan` is absent, else an edit of it.
 */
function PlanForm({
  plan,
  onSaved,
  onCancel,
}: {
  plan?: Plan;
  onSaved: (message: string) => Promise<unknown> | unknown;
  onCancel?: () => void;
}) {
  const titleId = useId();
  const form = useForm({
    name: plan?.name ?? '',
    description: plan?.description ?? '',
    amount_cents: plan ? String(plan.amount_cents) : '',
    quota_gib: plan && plan.quota_bytes !== null ? String(plan.quota_bytes / 1024 ** 3) : '',
    bandwidth_gib: plan && plan.bandwidth_bytes !== null ? String(plan.bandwidth_bytes / 1024 ** 3) : '',
    duration_days: plan?.duration_days ? String(plan.duration_days) : '',
    mark_text: plan?.watermark?.text ?? '',
    mark_image: plan?.watermark?.image ?? '',
    mark_position: plan?.watermark?.position ?? 'bottom-right',
    mark_opacity: String(plan?.watermark?.opacity ?? 0.6),
    mark_min_size: String(plan?.watermark?.min_size ?? 320),
    retention_days: plan?.retention_days ? String(plan.retention_days) : '',
  });
  const positionId = useId();
  const save = form.submit(async (values) => {
    const body = {
      name: values.name,
      description: values.description,
      amount_cents: Number(values.amount_cents),
      quota_bytes: values.quota_gib ? Math.round(Number(values.quota_gib) * 1024 ** 3) : null,
      bandwidth_bytes: values.bandwidth_gib ? Math.round(Number(values.bandwidth_gib) * 1024 ** 3) : null,
      duration_days: values.duration_days ? Number(values.duration_days) : 0,
      watermark: watermarkOf(values),
      retention_days: values.retention_days ? Number(values.retention_days) : null,
    };
    if (plan) {
      await call(api.PATCH('/api/v1/admin/plans/{id}', { ...byId(plan.id), body }));
    } else {
      await call(api.POST('/api/v1/admin/plans', { body }));
      form.reset();
    }
    await onSaved(`${values.name} ${plan ? 'saved' : 'created'}`);
  });
  return (
    <form onSubmit={save} noValidate aria-labelledby={titleId}>
      <h2 id={titleId}>{plan ? `Edit ${plan.name}` : 'New plan'}</h2>
      <Field form={form} name="name" label="Name" />
      <Field form={form} name="description" label="Description" />
      <Field form={form} name="amount_cents" label="Price in cents" inputMode="numeric" />
      <Field
        form={form}
        name="quota_gib"
        label="Quota in GiB"
        hint="Empty: the plan grants no storage; buyers keep the quota they have."
        inputMode="decimal"
      />
      <Field
        form={form}
        name="bandwidth_gib"
        label="Bandwidth a month in GiB"
        hint="Empty: unlimited. Past it plus the grace, the buyer's files stop being served until the month ends."
        inputMode="decimal"
      />
      <Field
        form={form}
        name="duration_days"
        label="Duration in days (empty: permanent)"
        inputMode="numeric"
      />
      <Field
        form={form}
        name="mark_text"
        label="Watermark text"
        hint="Empty (and no image): no watermark. Buyers' images and their originals are then served marked."
      />
      <Field
        form={form}
        name="mark_image"
        label="Watermark image (a file key of yours, 2026/01/02/….png)"
        hint="Drawn instead of the text."
      />
      <div class="field">
        <label for={positionId}>Watermark position</label>
        <select
          id={positionId}
          value={form.values.mark_position}
          onChange={(event) => form.set('mark_position', (event.target as HTMLSelectElement).value)}
        >
          {POSITIONS.map((position) => (
            <option key={position}>{position}</option>
          ))}
        </select>
      </div>
      <Field form={form} name="mark_opacity" label="Watermark opacity (0 to 1)" inputMode="decimal" />
      <Field
        form={form}
        name="mark_min_size"
        label="Watermark minimum size in pixels"
        hint="Images narrower or lower than this are not marked."
      />
      <Field
        form={form}
        name="retention_days"
        label="Default retention in days"
        hint="Empty: none. Buyers' uploads that set no expiry are deleted this many days after upload."
        inputMode="numeric"
      />
      <div class="actions">
        <button type="submit" disabled={form.busy}>
          {plan ? 'Save plan' : 'Create plan'}
        </button>
        {onCancel && (
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      {form.formError && <FormError message={form.formError} />}
    </form>
  );
}

export function AdminPlans() {
  const plans = useLoad(() => call(api.GET('/api/v1/admin/plans')));
  const action = useAction(plans.reload);
  const [editing, setEditing] = useState<Plan | null>(null);
  const [saved, setSaved] = useState('');
  const afterSave = async (message: string) => {
    setEditing(null);
    setSaved(message);
    await plans.reload();
  };
  return (
    <Page title="Plans">
      {action.view}
      {saved && <Status message={saved} />}
      <ListTable
        list={plans}
        items={plans.data}
        columns={['Name', 'Price', 'Quota', 'Days', 'On sale']}
        actions
        empty="No plans yet."
        hint="Make the first one with the form below."
        row={(plan) => (
          <tr key={plan.id}>
            <td>{plan.name}</td>
            <td>{formatMoney(plan.amount_cents)}</td>
            <td>{plan.quota_bytes === null ? 'no storage change' : formatBytes(plan.quota_bytes)}</td>
            <td>{plan.duration_days || '—'}</td>
            <td>{plan.active ? 'yes' : 'no'}</td>
            <td class="actions">
              <button
                type="button"
                class="secondary"
                onClick={() => {
                  setSaved('');
                  setEditing(plan);
                }}
              >
                Edit<span class="visually-hidden"> {plan.name}</span>
              </button>
              <ActionButton
                action={action}
                work={() => switchPlan(plan)}
                done={`${plan.name} ${plan.active ? 'withdrawn' : 'on sale'}`}
              >
                {plan.active ? 'Withdraw' : 'Put on sale'}
                <span class="visually-hidden"> {plan.name}</span>
              </ActionButton>
              <ActionButton
                action={action}
                work={() => call(api.DELETE('/api/v1/admin/plans/{id}', byId(plan.id)))}
                done={`${plan.name} deleted`}
              >
                Delete<span class="visually-hidden"> {plan.name}</span>
              </ActionButton>
            </td>
          </tr>
        )}
      />
      {editing && (
        <PlanForm key={editing.id} plan={editing} onSaved={afterSave} onCancel={() => setEditing(null)} />
      )}
      <PlanForm onSaved={afterSave} />
    </Page>
  );
}
