// Renewal reminders (docs/DESIGN.md 17): the reminders worker, as deployed, mails the owner of a paid plan
// once per grant when it ends within billing.renewal_reminder_days (3), reading the index of grant end
// dates; a permanent plan is never listed; buying the plan again makes a new grant, reminded again.
import { beforeAll, describe, expect, it } from 'vitest';
import { buildRemindersDeps } from '#functions/reminders/deps.ts';
import { createRemindersHandler } from '#functions/reminders/handler.ts';
import { needs } from '#functions/reminders/needs.ts';
import { createTestAccount, type TestAccount } from '#test/support/accounts.ts';
import { lambdaContext } from '#test/support/events.ts';
import { memoryMailer } from '#test/support/mail.ts';
import { testResources } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { call } from './helpers.ts';

const DAY_MS = 86_400_000;
const mail = memoryMailer();
let admin: TestAccount;

/** The worker with its clock `days` ahead of now and a mailer the test reads. */
function remindersAhead(days: number) {
  const clock = () => new Date(Date.now() + days * DAY_MS);
  const deps = buildRemindersDeps(testResources('reminders', needs, { clock, provided: { mail } }));
  const handler = createRemindersHandler(() => deps);
  return () => handler({ source: 'aws.events', 'detail-type': 'Scheduled Event' }, lambdaContext);
}

async function plan(durationDays: number): Promise<string> {
  const answer = await call('POST', '/api/v1/admin/plans', {
    headers: admin.headers,
    body: {
      name: `Plan of ${durationDays} days`,
      amount_cents: 500,
      quota_bytes: 1024 ** 2,
      duration_days: durationDays,
    },
  });
  return answer.json.data.id;
}

async function buy(who: TestAccount, planId: string): Promise<void> {
  const placed = await call('POST', '/api/v1/orders', {
    headers: who.headers,
    body: { plan_id: planId, provider: 'mock' },
  });
  const paid = await call('POST', `/api/v1/orders/${placed.json.data.id}/pay`, { headers: who.headers });
  expect(paid.json.data.status).toBe('paid');
}

const remindersTo = (who: TestAccount) =>
  mail.to(who.account.email!).filter((sent) => sent.subject === 'Your plan ends soon');

beforeAll(async () => {
  await provisionTestStack();
  admin = await createTestAccount({ role: 'admin' });
});

describe('renewal reminders', () => {
  it('mails once, 3 days before a paid plan ends, however many runs', async () => {
    const owner = await createTestAccount();
    await buy(owner, await plan(30));

    await remindersAhead(26)();
    expect(remindersTo(owner)).toHaveLength(0);

    await remindersAhead(27.5)();
    await remindersAhead(28)();
    await Promise.all([remindersAhead(28.5)(), remindersAhead(28.5)()]);

    const sent = remindersTo(owner);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.text).toContain('Plan of 30 days');
  });

  it('never reminds of a permanent plan', async () => {
    const owner = await createTestAccount();
    await buy(owner, await plan(0));

    await remindersAhead(3650)();

    expect(remindersTo(owner)).toHaveLength(0);
  });

  it('reminds again for the grant a second purchase makes, near its new end', async () => {
    const owner = await createTestAccount();
    const planId = await plan(5);
    await buy(owner, planId);
    await remindersAhead(3)();
    expect(remindersTo(owner)).toHaveLength(1);

    await buy(owner, planId);
    await remindersAhead(4)();
    expect(remindersTo(owner)).toHaveLength(1);
    await remindersAhead(8)();

    expect(remindersTo(owner)).toHaveLength(2);
  });
});
