// The render function's peak resident set for one first render, in a process of its own (started by
// renditions.ts with the bench's settings, so it talks to the same stand-ins): it imports the production
// render handler, renders the original whose key it is given to `w=480&f=webp` once, and prints one line
// `RENDER_MEMORY {json}`. Nothing is warmed first: a container's first render loads sharp and libvips too,
// and that is part of what the function's memory must hold.
//
// The peak is the kernel's high-water mark of this process's memory, VmHWM in /proc/self/status, not
// process.resourceUsage().maxRSS: on Linux a spawned child's maxRSS starts at its parent's resident set at
// the fork (the forked copy's, kept across exec), so a child of a 250 MiB bench reports at least 250 MiB
// whatever it does. Where /proc is missing, memory.ts's way: the resident set sampled every millisecond,
// and maxRSS only if this render raised it.
import { readFileSync } from 'node:fs';
import { handler } from '#functions/render/handler.ts';
import { apiEvent, lambdaContext } from '#test/support/events.ts';

/** VmHWM of this process, KiB, or undefined where the kernel does not say. */
function highWaterMarkKib(): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const key = process.argv[2];
  if (!key) throw new Error('usage: render-memory.ts <record key of a stored original>');
  const beforeRender = process.memoryUsage.rss();
  const maxBefore = process.resourceUsage().maxRSS;
  let sampled = beforeRender;
  const timer = setInterval(() => {
    sampled = Math.max(sampled, process.memoryUsage.rss());
  }, 1);
  let result: Awaited<ReturnType<typeof handler>>;
  try {
    result = await handler(apiEvent({ path: `/i/${key}?w=480&f=webp` }), lambdaContext);
  } finally {
    clearInterval(timer);
  }
  if (result.statusCode !== 200) throw new Error(`render: ${result.statusCode} ${result.body}`);
  sampled = Math.max(sampled, process.memoryUsage.rss());
  const maxAfter = process.resourceUsage().maxRSS;
  const sampledKib = Math.round(sampled / 1024);
  const fallback = maxAfter > maxBefore ? Math.max(sampledKib, maxAfter) : sampledKib;
  const report = {
    peak_rss_kib: highWaterMarkKib() ?? fallback,
    sampled_peak_rss_kib: sampledKib,
    max_rss_kib: maxAfter,
    before_render_rss_kib: Math.round(beforeRender / 1024),
  };
  console.log(`RENDER_MEMORY ${JSON.stringify(report)}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
