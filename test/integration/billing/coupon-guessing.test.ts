// Issue 37, finding 6: 400 coupon validations in 4 s were all answered, each saying why the code could not be
// used. Now coupon checks (validate, and an order naming a code) are limited per buyer and per client address
// (payment.coupon_checks, the defaults here): past either, 429 with Retry-After; every unusable code answers
// alike (coupons.test.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import { buildPaymentsDeps } from '#functions/payments/deps.ts';
import { createPaymentsHandler } from '#functions/payments/handler.ts';
import { needs as paymentsNeeds } from '#functions/payments/needs.ts';
import { configSchema } from '#lib/platform/config/schema.ts';
import { createTestAccount, movableClock, type TestAccount } from '#test/support/accounts.ts';
import { testSettings } from '#test/support/deps.ts';
import { apiEvent, lambdaContext, parseBody } from '#test/support/events.ts';
import { memoryMailer } from '#test/support/mail.ts';
import { testResources } from '#test/support/resources.ts';
import { provisionTestStack } from '#test/support/stack.ts';
import { createPlan } from './reconcile-support.ts';

/** The documented defaults (the test config turns the limits off for the other files). */
const DEFAULTS = configSchema.parse({}).payment.coupon_checks;
const BURST = 400;

let planId: string;
const clock = movableClock();
let payments: ReturnType<typeof createPaymentsHandler>;

beforeAll(async () => {
  await provisionTestStack();
  const admin = await createTestAccount({ role: 'admin' });
  planId = await createPlan(admin, 'Guessed month');
  const base = testSettings();
  const settings = { ...base, payment: { ...base.payment, coupon_checks: DEFAULTS } };
  const deps = buildPaymentsDeps(
    testResources('payments', paymentsNeeds, { settings, clock, provided: { mail: memoryMailer() } }),
  );
  payments = createPaymentsHandler(() => deps);
});

interface Answer {
  status: number;
  retryAfter: string | undefined;
  message: string;
}

async function guess(who: TestAccount, code: string, sourceIp: string): Promise<Answer> {
  const result = await payments(
    apiEvent({
      method: 'POST',
      path: '/api/v1/coupons/validate',
      headers: who.headers,
      body: { code, plan_id: planId },
      sourceIp,
    }),
    lambdaContext,
  );
  const headers = (result.headers ?? {}) as Record<string, string>;
  return {
    status: result.statusCode ?? 0,
    retryAfter: headers['retry-after'],
    message: (parseBody(result) as { message: string }).message,
  };
}

/** The guesses, 50 at a time (a burst, as the attack sent them). */
async function burst(guesses: Array<() => Promise<Answer>>): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let at = 0; at < guesses.length; at += 50) {
    answers.push(...(await Promise.all(guesses.slice(at, at + 50).map((one) => one()))));
  }
  return answers;
}

const count = (answers: Answer[], status: number) =>
  answers.filter((answer) => answer.status === status).length;

/** 400 distinct IPv4 addresses, none sharing a per-address budget. */
const addressOf = (index: number) => `100.64.${Math.floor(index / 200)}.${(index % 200) + 1}`;

describe('coupon checks', () => {
  it(`admits one buyer its burst (${DEFAULTS.per_account.burst}) of 400 guesses from 400 addresses; the rest are 429 with Retry-After`, async () => {
    // Prepare
    const guesser = await createTestAccount();
    const other = await createTestAccount();

    // Act
    const answers = await burst(
      Array.from({ length: BURST }, (_, index) => () => guess(guesser, `GUESS${index}`, addressOf(index))),
    );
    const otherBuyer = await guess(other, 'GUESSX', addressOf(0));
    const stillHeld = await guess(guesser, 'GUESSY', '192.0.2.1');
    clock.advance(60_000 / DEFAULTS.per_account.per_minute);
    const later = await guess(guesser, 'GUESSZ', '192.0.2.1');

    // Assess
    expect(count(answers, 400)).toBe(DEFAULTS.per_account.burst);
    expect(count(answers, 429)).toBe(BURST - DEFAULTS.per_account.burst);
    for (const refused of answers.filter((answer) => answer.status === 429)) {
      expect(Number(refused.retryAfter)).toBeGreaterThan(0);
      expect(refused.message).toBe('Too many coupon checks; try again later');
    }
    expect(otherBuyer).toMatchObject({ status: 400, message: 'coupon: cannot be used' });
    expect(stillHeld.status).toBe(429);
    expect(later).toMatchObject({ status: 400, message: 'coupon: cannot be used' });
  }, 60_000);

  it(`admits one address its burst (${DEFAULTS.per_address.burst}) of 400 guesses spread over 40 buyers; the rest are 429`, async () => {
    // Prepare: 40 buyers, each guessing 10 times (within its own budget), all from one address. Making 40
    // accounts (an argon2id hash each) takes most of the time: about 15 s on a quiet 2-core machine.
    const buyers = await Promise.all(Array.from({ length: 40 }, () => createTestAccount()));
    const address = '198.51.100.40';

    // Act
    const answers = await burst(
      Array.from({ length: BURST }, (_, index) => () => guess(buyers[index % 40]!, `TRY${index}`, address)),
    );
    const elsewhere = await guess(await createTestAccount(), 'TRYX', '198.51.100.41');

    // Assess
    expect(count(answers, 400)).toBe(DEFAULTS.per_address.burst);
    expect(count(answers, 429)).toBe(BURST - DEFAULTS.per_address.burst);
    expect(
      answers.filter((answer) => answer.status === 429).every((answer) => Number(answer.retryAfter) > 0),
    ).toBe(true);
    expect(elsewhere.status).toBe(400);
  }, 60_000);

  it('counts an order naming a code as a check, so orders are no way around the limit', async () => {
    // Prepare: a buyer who spent the burst on validations.
    const guesser = await createTestAccount();
    await burst(
      Array.from(
        { length: DEFAULTS.per_account.burst },
        (_, index) => () => guess(guesser, `SPENT${index}`, addressOf(index)),
      ),
    );

    // Act
    const placed = await payments(
      apiEvent({
        method: 'POST',
        path: '/api/v1/orders',
        headers: guesser.headers,
        body: { plan_id: planId, provider: 'manual', coupon_code: 'ORDERGUESS' },
        sourceIp: '192.0.2.77',
      }),
      lambdaContext,
    );
    const plain = await payments(
      apiEvent({
        method: 'POST',
        path: '/api/v1/orders',
        headers: guesser.headers,
        body: { plan_id: planId, provider: 'manual' },
        sourceIp: '192.0.2.77',
      }),
      lambdaContext,
    );

    // Assess
    expect(placed.statusCode).toBe(429);
    expect(plain.statusCode).toBe(201);
  });
});
