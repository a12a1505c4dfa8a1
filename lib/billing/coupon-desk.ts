// Coupons as administrators manage them and buyers use them (docs/DESIGN.md 17): create, list, change,
// delete; the quote of a code for a plan (what validate answers and what an order is placed at), limited
// per buyer and per address and one answer for every unusable code, and the redemption given back when an
// order is cancelled or expires unpaid.
import { addressBucket } from '#lib/accounts/client.ts';
import type { RateLimit, Throttle } from '#lib/accounts/throttle.ts';
import { errors } from '#lib/core/errors.ts';
import type { Page } from '#lib/platform/db/paging.ts';
import { type Clock, ConditionFailedError, type TransactItem } from '#lib/platform/db/table.ts';
import { log } from '#lib/platform/log.ts';
import { bucketCap, type Coupon, type CouponRepository, holdKey } from './coupons.ts';
import { orderKey } from './orders.ts';
import type { SaleTerms } from './plans.ts';

export interface NewCoupon {
  code: string;
  percent_off?: number | undefined;
  amount_off_cents?: number | undefined;
  min_amount_cents?: number | undefined;
  max_redemptions?: number | undefined;
  per_account_limit?: number | undefined;
  starts_at?: string | undefined;
  ends_at?: string | undefined;
  plan_ids?: string[] | undefined;
}

export interface CouponChanges {
  active?: boolean | undefined;
  ends_at?: string | null | undefined;
  max_redemptions?: number | null | undefined;
}

/** What a code takes off a plan's price. */
export interface Quote {
  coupon: Coupon;
  /** The coupon's bucket counts read with it: a limited coupon's order takes its share by them. */
  counts: number[];
  code: string;
  plan_id: string;
  amount_cents: number;
  discount_cents: number;
  final_cents: number;
}

/**
 * A code that cannot be used, whatever the reason (unknown, switched off, not started, ended, used up,
 * already used by this buyer, another plan's, below the minimum): one answer, so a guesser learns nothing
 * but "not usable" (docs/PAYMENTS-GUIDE.md "Coupons").
 */
export const unusableCoupon = () => errors.validation([{ field: 'coupon', message: 'cannot be used' }]);
const couponNotFound = () => errors.notFound('Coupon not found');

/** Who checks a code: the buyer's account and the client's address, each with its own budget. */
export interface CouponBuyer {
  userId: string;
  ip: string;
}

export interface CouponDeskDeps {
  coupons: CouponRepository;
  clock: Clock;
  throttle: Pick<Throttle, 'consume'>;
  /** `payment.coupon_checks`: checks per buyer and per client address (IPv6 by /64). */
  checks: { perAccount: RateLimit; perAddress: RateLimit };
}

export class CouponDesk {
  constructor(private readonly deps: CouponDeskDeps) {}

  async create(input: NewCoupon): Promise<Coupon> {
    const hasPercent = input.percent_off !== undefined;
    if (hasPercent === (input.amount_off_cents !== undefined)) {
      throw errors.validation([
        { field: 'percent_off', message: 'give exactly one of percent_off and amount_off_cents' },
      ]);
    }
    if (input.starts_at && input.ends_at && Date.parse(input.ends_at) <= Date.parse(input.starts_at)) {
      throw errors.validation([{ field: 'ends_at', message: 'must be after starts_at' }]);
    }
    try {
      return await this.deps.coupons.create(
        {
          code: input.code,
          percent_off: input.percent_off ?? null,
          amount_off_cents: input.amount_off_cents ?? null,
          min_amount_cents: input.min_amount_cents ?? null,
          max_redemptions: input.max_redemptions ?? null,
          per_account_limit: input.per_account_limit ?? 1,
          starts_at: input.starts_at ?? null,
          ends_at: input.ends_at ?? null,
          plan_ids: input.plan_ids ?? null,
          active: true,
        },
        this.deps.clock(),
      );
    } catch (error) {
      if (error instanceof ConditionFailedError) {
        throw errors.conflict(`A coupon with the code ${input.code} exists (codes ignore case)`);
      }
      throw error;
    }
  }

  list(limit: number, cursor?: string): Promise<Page<Coupon>> {
    return this.deps.coupons.list(limit, cursor);
  }

  async update(id: string, changes: CouponChanges): Promise<Coupon> {
    const coupon = await this.deps.coupons.get(id);
    if (!coupon) throw couponNotFound();
    if (changes.ends_at && coupon.starts_at && Date.parse(changes.ends_at) <= Date.parse(coupon.starts_at)) {
      throw errors.validation([{ field: 'ends_at', message: 'must be after starts_at' }]);
    }
    try {
      return await this.deps.coupons.update(id, changes, this.deps.clock());
    } catch (error) {
      if (error instanceof ConditionFailedError) throw couponNotFound();
      throw error;
    }
  }

  async delete(id: string): Promise<{ id: string; deleted: true }> {
    const coupon = await this.deps.coupons.get(id);
    if (!coupon) throw couponNotFound();
    try {
      await this.deps.coupons.delete(coupon);
    } catch (error) {
      if (error instanceof ConditionFailedError) throw couponNotFound();
      throw error;
    }
    return { id, deleted: true };
  }

  /**
   * What `code` takes off each of `plans` it can be used on, for this buyer now (one check, however many
   * plans), or the one 400 of an unusable code when it takes nothing off any; 429 past the buyer's or the
   * address's budget. The counts read here are a preview: the order's transaction holds them again
   * (lib/billing/coupons.ts redeemItems).
   */
  async quote(code: string, plans: readonly SaleTerms[], buyer: CouponBuyer): Promise<Quote[]> {
    const { throttle, checks } = this.deps;
    const tooMany = 'Too many coupon checks; try again later';
    await throttle.consume(`coupon#account#${buyer.userId}`, checks.perAccount, tooMany);
    await throttle.consume(`coupon#ip#${addressBucket(buyer.ip)}`, checks.perAddress, tooMany);
    const id = await this.deps.coupons.idOfCode(code);
    if (!id) throw unusableCoupon();
    // The coupon and this buyer's uses of it, read together.
    const [counted, used] = await Promise.all([
      this.deps.coupons.getCounted(id),
      this.deps.coupons.usedBy(id, buyer.userId),
    ]);
    const coupon = counted?.coupon;
    const now = this.deps.clock().getTime();
    const quotes = coupon ? plans.filter((plan) => usable(coupon, plan, used, now)) : [];
    if (!coupon || quotes.length === 0) throw unusableCoupon();
    return quotes.map((plan) => {
      const discount = discountOf(coupon, plan.amount_cents);
      return {
        coupon,
        counts: counted.counts,
        code: coupon.code,
        plan_id: plan.id,
        amount_cents: plan.amount_cents,
        discount_cents: discount,
        final_cents: plan.amount_cents - discount,
      };
    });
  }

  /**
   * The writes taking one redemption in a new order's transaction, in `bucket` (lib/billing/coupons.ts);
   * undefined when the bucket has no share of a limited coupon's room (nothing to try there).
   */
  redeemItems(quote: Quote, bucket: number, userId: string, orderId: string, deadlineMs: number) {
    const { coupon, counts } = quote;
    if (coupon.max_redemptions !== null && bucketCap(coupon, counts, bucket) === 0) return undefined;
    return this.deps.coupons.redeemItems(
      quote.coupon,
      { bucket, counts: quote.counts },
      userId,
      orderId,
      deadlineMs,
    );
  }

  /**
   * Gives an order's redemption back, once (its hold must still be there). A coupon deleted since: the
   * buyer's count alone. Returns false when the order held none (any more).
   */
  async release(orderId: string, extra: TransactItem[] = []) {
    const { coupons } = this.deps;
    const hold = await coupons.hold(orderId);
    if (!hold) return false;
    const couponExists = (await coupons.get(hold.coupon_id)) !== undefined;
    await coupons.table.transact([...coupons.releaseItems(hold, couponExists), ...extra]);
    return true;
  }

  /**
   * Gives back the redemptions of orders whose deadline passed unpaid (the reconciler's run, over the holds
   * listed by deadline); a hold of an order paid (or gone) is simply removed. At most `limit` a run.
   */
  async releaseExpired(
    readOrder: (id: string) => Promise<{ status: string; deadline_ms: number } | undefined>,
    limit: number,
  ): Promise<number> {
    const now = this.deps.clock();
    const { items } = await this.deps.coupons.holdsDueBy(now, limit);
    let released = 0;
    for (const hold of items) {
      try {
        const order = await readOrder(hold.order_id);
        if (order && order.status === 'pending' && order.deadline_ms <= now.getTime()) {
          // The order's status is checked in the same transaction: a payment racing the release wins or loses whole.
          if (await this.release(hold.order_id, [expiredCheck(hold.order_id, now)])) released += 1;
        } else if (order?.status !== 'pending') {
          // Paid (it keeps its redemption) or cancelled (given back then): only the listing entry goes.
          await this.deps.coupons.table.delete(holdKey(hold.order_id));
        }
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) {
          log.error('a coupon redemption could not be given back', { order_id: hold.order_id, error });
        }
      }
    }
    return released;
  }
}

/** The order is still pending and past its deadline (a condition in the release's transaction). */
function expiredCheck(orderId: string, now: Date): TransactItem {
  return {
    ConditionCheck: {
      Key: orderKey(orderId),
      ConditionExpression: '#status = :pending AND deadline_ms <= :now',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':pending': 'pending', ':now': now.getTime() },
    },
  };
}

/** Whether `coupon` can take `used` + 1 redemptions on `plan` at `now`. */
function usable(coupon: Coupon, plan: SaleTerms, used: number, now: number): boolean {
  return (
    coupon.active &&
    !(coupon.starts_at && now < Date.parse(coupon.starts_at)) &&
    !(coupon.ends_at && now >= Date.parse(coupon.ends_at)) &&
    (!coupon.plan_ids || coupon.plan_ids.includes(plan.id)) &&
    (coupon.min_amount_cents === null || plan.amount_cents >= coupon.min_amount_cents) &&
    (coupon.max_redemptions === null || coupon.redemptions < coupon.max_redemptions) &&
    used < coupon.per_account_limit
  );
}

/** Percent off rounds the discount down (the buyer never gets more than the percentage); never below 0. */
export function discountOf(coupon: Pick<Coupon, 'percent_off' | 'amount_off_cents'>, amount: number): number {
  if (coupon.percent_off !== null) return Math.floor((amount * coupon.percent_off) / 100);
  return Math.min(coupon.amount_off_cents ?? 0, amount);
}
