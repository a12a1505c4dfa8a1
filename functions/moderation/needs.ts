// What the `moderation` worker needs (lib/wiring/needs.ts): the table's stream brings each new file record;
// it reads the file's bytes, classifies them (docs/MODERATION.md) and writes the record's moderation, the
// queue and the edge's hold.
import type { GroupNeeds } from '#lib/wiring/needs.ts';

export const needs = {
  table: 'readwrite',
  // The originals only: it writes no object.
  bucket: 'read',
  // Amazon Rekognition's DetectModerationLabels, granted only where `moderation.provider` is rekognition.
  moderationApi: true,
} as const satisfies GroupNeeds;
