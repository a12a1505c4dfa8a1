// Every group's needs by name: what the stack and the local runner iterate over.

import { needs as accountLifecycle } from '#functions/account-lifecycle/needs.ts';
import { needs as accounts } from '#functions/accounts/needs.ts';
import { needs as banMirror } from '#functions/ban-mirror/needs.ts';
import { needs as bandwidth } from '#functions/bandwidth/needs.ts';
import { needs as files } from '#functions/files/needs.ts';
import { needs as meta } from '#functions/meta/needs.ts';
import { needs as moderation } from '#functions/moderation/needs.ts';
import { needs as outboxDrain } from '#functions/outbox-drain/needs.ts';
import { needs as paymentCallback } from '#functions/payment-callback/needs.ts';
import { needs as payments } from '#functions/payments/needs.ts';
import { needs as reconciler } from '#functions/reconciler/needs.ts';
import { needs as reminders } from '#functions/reminders/needs.ts';
import { needs as render } from '#functions/render/needs.ts';
import { needs as shares } from '#functions/shares/needs.ts';
import { needs as takedowns } from '#functions/takedowns/needs.ts';
import type { FunctionGroup } from '#lib/http/routes.ts';
import type { GroupNeeds } from '#lib/wiring/needs.ts';

/** A Record, so a new group in lib/http/routes.ts does not compile until it declares its needs. */
export const GROUP_NEEDS: Record<FunctionGroup, GroupNeeds> = {
  accounts,
  shares,
  files,
  meta,
  render,
  payments,
  'payment-callback': paymentCallback,
};

/** Functions that serve no route: they run on a table stream or a schedule (docs/DESIGN.md 14). */
export type WorkerName =
  | 'outbox-drain'
  | 'reconciler'
  | 'takedowns'
  | 'reminders'
  | 'bandwidth'
  | 'moderation'
  | 'ban-mirror'
  | 'account-lifecycle';

export const WORKER_NEEDS: Record<WorkerName, GroupNeeds> = {
  'outbox-drain': outboxDrain,
  reconciler,
  takedowns,
  reminders,
  bandwidth,
  moderation,
  'ban-mirror': banMirror,
  'account-lifecycle': accountLifecycle,
};

export const WORKER_NAMES = Object.keys(WORKER_NEEDS) as WorkerName[];
