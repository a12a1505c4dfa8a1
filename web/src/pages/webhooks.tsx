// Webhooks (docs/WEBHOOKS.md): the owner's endpoints (at most five), a new one with its signing secret shown
// once, deletion, and an endpoint's latest deliveries with each attempt's answer.
import { useState } from 'preact/hooks';
import { ActionButton, useAction } from '../action.tsx';
import { api, byId, call, type DataOf } from '../api/client.ts';
import { Field, Submit, useForm } from '../form.tsx';
import { formatTime, ListTable, Page, useLoad } from '../ui.tsx';

type Created = DataOf<'/api/v1/webhooks', 'post', 201>;
type Delivery = DataOf<'/api/v1/webhooks/{id}/deliveries', 'get'>[number];
const EVENTS = ['file.uploaded', 'file.deleted', 'order.paid'] as const;

export function WebhooksPage() {
  const endpoints = useLoad(() => call(api.GET('/api/v1/webhooks')));
  const form = useForm({ url: '' });
  const [events, setEvents] = useState<string[]>([...EVENTS]);
  const [created, setCreated] = useState<Created | null>(null);
  const [shown, setShown] = useState<{ id: string; url: string; deliveries: Delivery[] } | null>(null);
  const action = useAction(endpoints.reload);

  const create = form.submit(async ({ url }) => {
    const body = { url, events: events as Created['events'] };
    setCreated(await call(api.POST('/api/v1/webhooks', { body })));
    form.reset();
    await endpoints.reload();
  });
  const toggle = (event: string) =>
    setEvents((now) => (now.includes(event) ? now.filter((one) => one !== event) : [...now, event]));
  const show = async (id: string, url: string) =>
    setShown({ id, url, deliveries: await call(api.GET('/api/v1/webhooks/{id}/deliveries', byId(id))) });

  return (
    <Page title="Webhooks">
      <p>
        Up to five https endpoints of yours are called when a file is uploaded or deleted or an order is paid,
        each call signed with the endpoint's secret (the <code>Webhook-Signature</code> header).
      </p>
      <form onSubmit={create} noValidate>
        <Field form={form} name="url" label="Endpoint URL" type="url" required maxLength={2048} />
        <fieldset>
          <legend>Events</legend>
          {EVENTS.map((event) => (
            <label key={event}>
              <input type="checkbox" checked={events.includes(event)} onChange={() => toggle(event)} />{' '}
              {event}
            </label>
          ))}
        </fieldset>
        <Submit form={form}>Add endpoint</Submit>
      </form>
      {created && (
        <section class="secret" aria-labelledby="new-secret-title">
          <h2 id="new-secret-title">Endpoint added</h2>
          <p>Copy its signing secret now: it is shown only this once.</p>
          <label for="new-secret">Signing secret</label>
          <input id="new-secret" readOnly value={created.secret} />
          <button type="button" onClick={() => action.copy(created.secret, 'Secret')}>
            Copy secret
          </button>
          <button type="button" class="secondary" onClick={() => setCreated(null)}>
            I have saved it
          </button>
        </section>
      )}
      {action.view}
      <h2>Your endpoints</h2>
      <ListTable
        list={endpoints}
        items={endpoints.data}
        columns={['URL', 'Events', 'On', 'Created']}
        actions
        empty="No webhook endpoints yet."
        row={(endpoint) => (
          <tr key={endpoint.id}>
            <td>{endpoint.url}</td>
            <td>{endpoint.events.join(', ')}</td>
            <td>{endpoint.enabled ? 'Yes' : 'No'}</td>
            <td>{formatTime(endpoint.created_at)}</td>
            <td>
              <ActionButton
                action={action}
                work={() =>
                  call(
                    api.PATCH('/api/v1/webhooks/{id}', {
                      ...byId(endpoint.id),
                      body: { enabled: !endpoint.enabled },
                    }),
                  )
                }
                done={endpoint.enabled ? 'Endpoint turned off' : 'Endpoint turned on'}
              >
                {endpoint.enabled ? 'Turn off' : 'Turn on'}
                <span class="visually-hidden"> {endpoint.url}</span>
              </ActionButton>
              <ActionButton action={action} work={() => show(endpoint.id, endpoint.url)}>
                Deliveries<span class="visually-hidden"> of {endpoint.url}</span>
              </ActionButton>
              <ActionButton
                action={action}
                work={() => call(api.DELETE('/api/v1/webhooks/{id}', byId(endpoint.id)))}
                done="Endpoint deleted"
              >
                Delete<span class="visually-hidden"> {endpoint.url}</span>
              </ActionButton>
            </td>
          </tr>
        )}
      />
      {shown && (
        <section aria-labelledby="deliveries-title">
          <h2 id="deliveries-title">Deliveries to {shown.url}</h2>
          <ListTable
            list={{ data: shown.deliveries, error: '' }}
            items={shown.deliveries}
            columns={['Event', 'Created', 'State', 'Attempts']}
            empty="No deliveries yet."
            row={(delivery) => (
              <tr key={delivery.id}>
                <td>{delivery.type}</td>
                <td>{formatTime(delivery.created_at)}</td>
                <td>{delivery.state}</td>
                <td>
                  {delivery.attempts
                    .map(
                      (attempt) =>
                        `${formatTime(attempt.at)}: ${attempt.status ?? attempt.error} (${attempt.duration_ms} ms)`,
                    )
                    .join('; ')}
                </td>
              </tr>
            )}
          />
        </section>
      )}
    </Page>
  );
}
