// The pure rules of docs/DESIGN.md 17: what a coupon takes off a price, and what a full refund takes back of
// the buyer's grant (the days the order added, or all of it).
import { describe, expect, it } from 'vitest';
import { discountOf } from '#lib/billing/coupon-desk.ts';
import { DAY_MS, type Grant, grantAfterRefund } from '#lib/files/quota-model.ts';

const NOW = new Date('2026-06-01T00:00:00Z');
const grant = (fields: Partial<Grant> = {}): Grant => ({
  order_id: 'ORDER1',
  plan_id: 'plan-a',
  plan_name: 'A',
  quota_bytes: 1024,
  started_at: '2026-05-01T00:00:00+00:00',
  ends_ms: NOW.getTime() + 50 * DAY_MS,
  ...fields,
});
const terms = (fields: { plan_id?: string; quota_bytes?: number | null; duration_days?: number } = {}) => ({
  plan_id: 'plan-a',
  quota_bytes: 1024,
  duration_days: 30,
  ...fields,
});

describe('discountOf', () => {
  it.each([
    [{ percent_off: 15, amount_off_cents: null }, 1230, 184],
    [{ percent_off: 100, amount_off_cents: null }, 1230, 1230],
    [{ percent_off: 1, amount_off_cents: null }, 99, 0],
    [{ percent_off: null, amount_off_cents: 300 }, 1230, 300],
    [{ percent_off: null, amount_off_cents: 5000 }, 1230, 1230],
  ])('%o off %i cents is %i (percent rounds down, never more than the price)', (coupon, amount, expected) => {
    expect(discountOf(coupon, amount)).toBe(expected);
  });
});

describe('grantAfterRefund', () => {
  it('takes the days the order added off the grant of its plan', () => {
    const after = grantAfterRefund(grant(), terms(), NOW);
    expect(after).toEqual({ kind: 'shortened', grant: grant({ ends_ms: NOW.getTime() + 20 * DAY_MS }) });
  });

  it('removes the grant when the days taken back leave nothing', () => {
    expect(grantAfterRefund(grant({ ends_ms: NOW.getTime() + 10 * DAY_MS }), terms(), NOW)).toEqual({
      kind: 'removed',
    });
  });

  it('removes the whole grant when the order was permanent', () => {
    expect(grantAfterRefund(grant({ ends_ms: undefined }), terms({ duration_days: 0 }), NOW)).toEqual({
      kind: 'removed',
    });
  });

  it.each([
    ['another plan replaced it', grant({ plan_id: 'plan-b' }), terms()],
    ['it already ended', grant({ ends_ms: NOW.getTime() - 1 }), terms()],
    ['no grant is held', undefined, terms()],
    ['the plan granted no storage', grant(), terms({ quota_bytes: null })],
    ['another order made it permanent', grant({ ends_ms: undefined }), terms()],
  ])('leaves the grant alone when %s', (_case, current, bought) => {
    expect(grantAfterRefund(current, bought, NOW)).toEqual({ kind: 'unchanged' });
  });
});
