// Builds the pending takedowns (takedowns.ts): the files group records them (lib/files buildFiles), the
// takedowns worker sends them; both build them here, over the same settings.
import { Takedowns, type TakedownsDeps } from './takedowns.ts';

export function buildTakedowns(input: TakedownsDeps): Takedowns {
  return new Takedowns(input);
}
