// Lambda entry of the `shares` group: share links of files and albums (docs/DESIGN.md 16), the owner's
// routes and the viewer's (open, the page without script, a random image, the share's images through its
// door). It ships argon2 (share passwords are hashed like account passwords), the password-guessing guard,
// and sharp for the thumbnails a share shows (lib/files/renditions.ts, as the render group renders them).
import { createGroupHandler, type EntryOptions } from '#lib/http/handler.ts';
import { config } from '#lib/platform/config/index.ts';
import { groupBans } from '#lib/wiring/bans.ts';
import { groupFrontDoor } from '#lib/wiring/front-door.ts';
import { type SharesDeps, sharesDeps } from './deps.ts';
import { needs } from './needs.ts';
import { shareRoutes } from './routes.ts';

/** The shares group over the given dependencies (tests build theirs with the same builder). */
export function createSharesHandler(deps: () => SharesDeps, options: EntryOptions = {}) {
  return createGroupHandler('shares', shareRoutes(deps), {
    authenticate: (request, kind) => deps().authenticate(request, kind),
    // Only through the CDN, which also names the viewer's address the per-IP limit counts.
    frontDoor: options.frontDoor,
    bans: options.bans,
  });
}

export const handler = createSharesHandler(sharesDeps, {
  frontDoor: groupFrontDoor('shares', needs, config),
  bans: groupBans('shares', needs, config),
});
