// The zod every schema of the service is built with: zod/mini, set up here once, before any schema parses
// (each module that builds schemas imports them from here). Import it as `import * as z from '…/zod.ts'`.
//
// zod/mini rather than classic zod: classic attaches dozens of methods to every schema it builds and
// brings every schema kind into a bundle (about 91 KiB); mini's functions are shaken out when unused, so a
// bundle carries only what its schemas use. Same core, same parsing, same messages, same JSON Schema
// (docs/PERFORMANCE.md "Cold start").
import { config } from 'zod/mini';
// The one locale by its own path: through zod/mini's `locales` a bundle would carry all of them (258 KiB).
import en from 'zod/v4/locales/en.js';

config({
  // English messages: classic zod loads them itself, mini leaves every message "Invalid input". The
  // handler's plainMessage rewords zod's defaults by their text, and the configuration's problems quote them.
  ...en(),
  // No generated fast paths (zod compiles one per object schema with `new Function` on its first parse):
  // a cold start parses each schema about once, so compiling them costs more than it saves (about 4 ms of
  // the configuration's validation at import). Same results, same messages.
  jitless: true,
});

export * from 'zod/mini';
