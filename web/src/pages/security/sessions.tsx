// The security page's live sessions (revoke one, or every other) and the account's security events.
import { ActionButton, useAction } from '../../action.tsx';
import { api, byId, call } from '../../api/client.ts';
import { FormError, formatTime, ListState, listPhase, useLoad } from '../../ui.tsx';

export function Sessions() {
  const sessions = useLoad(() => call(api.GET('/auth/sessions')));
  const action = useAction(sessions.reload);
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      {(action.error || sessions.error) && <FormError message={action.error || sessions.error} />}
      <ListState phase={listPhase(sessions, sessions.data?.length ?? 0)} rows={2} empty="No live sessions." />
      <ul class="rows">
        {sessions.data?.map((row) => (
          <li key={row.id}>
            <span>
              {row.user_agent ?? 'Unknown browser'} · {row.ip ?? 'unknown address'} · since{' '}
              {formatTime(row.created_at)}
              {row.current ? ' (this session)' : ''}
            </span>
            {!row.current && (
              <ActionButton
                action={action}
                work={() => call(api.DELETE('/auth/sessions/{id}', byId(row.id)))}
              >
                Revoke<span class="visually-hidden"> session since {formatTime(row.created_at)}</span>
              </ActionButton>
            )}
          </li>
        ))}
      </ul>
      <ActionButton action={action} work={() => call(api.POST('/auth/sessions/revoke-others', { body: {} }))}>
        Log out every other session
      </ActionButton>
    </section>
  );
}

export function Events() {
  const events = useLoad(() => call(api.GET('/auth/security/events')));
  return (
    <section aria-labelledby="events-title">
      <h2 id="events-title">Security events</h2>
      {events.error && <FormError message={events.error} />}
      <ListState
        phase={listPhase(events, events.data?.items.length ?? 0)}
        empty="No security events in the last 90 days."
      />
      <ul class="rows">
        {events.data?.items.map((event) => (
          <li key={`${event.at}-${event.type}`}>
            {formatTime(event.at)} · {event.type.replace(/_/g, ' ')} · {event.ip ?? 'unknown address'}
          </li>
        ))}
      </ul>
    </section>
  );
}
