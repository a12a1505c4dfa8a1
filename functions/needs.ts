// Every group's needs by name: what the stack and the local runner iterate over.
import type { FunctionGroup } from '#lib/routes.ts';
import type { GroupNeeds } from '#lib/wiring/needs.ts';
import { needs as auth } from './auth/needs.ts';
import { needs as files } from './files/needs.ts';
import { needs as outboxDrain } from './outbox-drain/needs.ts';
import { needs as paymentCallback } from './payment-callback/needs.ts';
import { needs as payments } from './payments/needs.ts';
import { needs as reconciler } from './reconciler/needs.ts';
import { needs as upload } from './upload/needs.ts';

/** A Record, so a new group in lib/routes.ts does not compile until it declares its needs. */
export const GROUP_NEEDS: Record<FunctionGroup, GroupNeeds> = {
  auth,
  upload,
  files,
  payments,
  'payment-callback': paymentCallback,
};

/** Functions that serve no route: they run on a table stream or a schedule (docs/DESIGN.md 14). */
export type WorkerName = 'outbox-drain' | 'reconciler';

export const WORKER_NEEDS: Record<WorkerName, GroupNeeds> = {
  'outbox-drain': outboxDrain,
  reconciler,
};

export const WORKER_NAMES = Object.keys(WORKER_NEEDS) as WorkerName[];
