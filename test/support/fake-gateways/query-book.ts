// What a fake gateway answers when asked about an order (reconciliation): the orders it took, and a switch per
// order for the answer (paid, not paid, or one of the faults a real channel shows).

/**
 * - `paid` / `not_paid`: a correct, signed answer.
 * - `unknown_order`: the channel's own "no such trade" answer (nobody has paid or scanned yet).
 * - `down`: HTTP 500; `unreachable`: the connection is cut before any answer.
 * - `garbage`: a 200 whose body is not the channel's format.
 * - `wrong_signature`: a paid answer whose signature does not verify (not for EPay V1, which signs none).
 * - `wrong_amount`: a correctly signed paid answer for another amount.
 * - `other_merchant`: a correctly signed paid answer naming another merchant.
 */
export type QueryMode =
  | 'paid'
  | 'not_paid'
  | 'unknown_order'
  | 'down'
  | 'unreachable'
  | 'garbage'
  | 'wrong_signature'
  | 'wrong_amount'
  | 'other_merchant';

export class QueryBook {
  private readonly amounts = new Map<string, number>();
  private readonly modes = new Map<string, QueryMode>();
  /** Every out_trade_no asked about, in order. */
  readonly queried: string[] = [];

  /** The gateway took this order (called by the fake's order endpoint). */
  remember(outTradeNo: string, amountCents: number): void {
    this.amounts.set(outTradeNo, amountCents);
  }

  /** How the next queries about this order are answered. */
  set(outTradeNo: string, mode: QueryMode): void {
    this.modes.set(outTradeNo, mode);
  }

  /** The switch, or by default: an order it took is unpaid, any other is unknown to it. */
  modeOf(outTradeNo: string): QueryMode {
    return this.modes.get(outTradeNo) ?? (this.amounts.has(outTradeNo) ? 'not_paid' : 'unknown_order');
  }

  amountOf(outTradeNo: string): number {
    return this.amounts.get(outTradeNo) ?? 0;
  }

  /** Records a query and answers its mode. */
  ask(outTradeNo: string): QueryMode {
    this.queried.push(outTradeNo);
    return this.modeOf(outTradeNo);
  }

  timesQueried(outTradeNo: string): number {
    return this.queried.filter((asked) => asked === outTradeNo).length;
  }
}

/** 1230 -> "12.30" (the yuan text channels send). */
export function yuanText(cents: number): string {
  return `${Math.trunc(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** 12.30 / "12.3" -> 1230, for reading what the service sent. */
export function centsOfYuan(text: string | undefined): number {
  const [whole = '0', fraction = ''] = String(text ?? '0').split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0').slice(0, 2));
}
