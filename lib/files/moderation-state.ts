// A file's moderation as its record keeps it (docs/MODERATION.md): what the files domain itself reads
// (held files leave the gallery and are not served through shares) and what records show owners and
// administrators. The moderation domain (lib/moderation) decides and changes it.

/** Served and unlisted in the queue, served and queued, or served to nobody but its owner and administrators. */
export const MODERATION_STATES = ['published', 'flagged', 'held'] as const;
export type ModerationState = (typeof MODERATION_STATES)[number];

export interface ModerationLabel {
  name: string;
  score: number;
}

export interface Moderation {
  state: ModerationState;
  labels: ModerationLabel[];
  /** The classifier's score, null when it could not classify the file (then `error` says why). */
  score: number | null;
  /** Set by an administrator's review: the classifier never changes it again. */
  reviewed?: boolean;
  /** Why the classifier could not classify the file (the worker tries again). */
  error?: string;
}

/** The short page of a 451 wherever a held file is asked for (the edge, a share's door). */
export const HELD_MESSAGE = 'This file is held for review and is not shown for now.';

/** Whether a file with this moderation is kept from strangers. */
export const isHeld = (moderation: unknown): boolean =>
  (moderation as { state?: unknown } | undefined)?.state === 'held';
