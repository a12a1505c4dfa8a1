// Renders as `npm start` runs them: the render function in its own process with only its needs'
// environment (infra/local/function-host.ts serves its invocations concurrently), behind the local server
// playing the CDN. Issue 37's attack, four slow AVIF renders of a big JPEG, once made every other render of
// that process answer 503 for minutes; now they are stopped at the deadline, their render processes killed,
// while the same function keeps rendering small images (docs/IMAGES.md "Bounded renders").
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { localFunctionEnvironment } from '#infra/local/app.ts';
import { type FunctionProcess, startFunctionProcess } from '#infra/local/function-process.ts';
import { newFilenameSuffix, storageKey, storedFilename } from '#lib/files/names.ts';
import { config } from '#lib/platform/config/index.ts';
import { testStorage } from '#test/support/deps.ts';
import { makePng, noiseJpeg } from '#test/support/images.ts';
import { useLocalApp } from '#test/support/local-app.ts';
import { signedQuery } from '#test/support/signed-renditions.ts';
import { isAlive } from '#test/support/start-process.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const TIMEOUT_SECONDS = 3;

let render: FunctionProcess;
/** The render function's log lines (JSON), as it writes them. */
const lines: Array<Record<string, unknown>> = [];

const app = useLocalApp(async () => {
  const settings = {
    ...config,
    log: { level: 'warn' as const },
    // AVIF's bound lifted, so the attack's renders are slower than the deadline on any machine.
    images: { ...config.images, render_timeout_seconds: TIMEOUT_SECONDS, avif_max_pixels: 16_000_000 },
  };
  render = await startFunctionProcess({
    name: 'render',
    host: `${ROOT}infra/local/function-host.ts`,
    module: `${ROOT}functions/render/handler.ts`,
    env: localFunctionEnvironment('render', settings),
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    output: (line) => {
      if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    },
    startTimeoutMs: 60_000,
  });
  return { functions: new Map([['render', render]]) };
}, 90_000);

async function stored(bytes: Buffer, ext: string, contentType: string): Promise<string> {
  const key = storageKey(new Date(), storedFilename(randomUUID(), newFilenameSuffix(randomUUID()), ext));
  await testStorage().put(key, bytes, contentType);
  return key;
}

async function get(path: string) {
  const [pathname, query = ''] = path.split('?');
  const response = await fetch(`${app.url}${pathname}?${signedQuery(pathname!.slice(3), query)}`);
  const bytes = Buffer.from(await response.arrayBuffer());
  const json = response.headers.get('content-type')?.startsWith('application/json')
    ? (JSON.parse(bytes.toString('utf8')) as { message: string })
    : undefined;
  return { status: response.status, message: json?.message, type: response.headers.get('content-type') };
}

describe('the local render function', () => {
  it('keeps answering small renditions while slow ones run, and stops the slow ones for real', async () => {
    const big = await stored(await noiseJpeg(4000, 4000), 'jpg', 'image/jpeg');
    const small = await Promise.all(
      Array.from({ length: 12 }, (_, i) => stored(makePng(64, 64, [200, i * 20, 40]), 'png', 'image/png')),
    );

    const slow = Promise.all([50, 75, 90, 100].map((q) => get(`/i/${big}?f=avif&q=${q}`)));
    const answers = [];
    for (let at = 0; at < small.length; at += 4) {
      answers.push(
        ...(await Promise.all(small.slice(at, at + 4).map((key) => get(`/i/${key}?w=32&f=webp`)))),
      );
    }
    const stopped = await slow;

    expect(answers.map((answer) => [answer.status, answer.type])).toEqual(
      Array(12).fill([200, 'image/webp']),
    );
    expect(stopped.map((answer) => [answer.status, answer.message])).toEqual(
      Array(4).fill([422, `image: the render took over ${TIMEOUT_SECONDS} seconds and was stopped`]),
    );
    const killed = lines.filter((line) => line.message === 'render process stopped');
    expect(killed.map((line) => line.reason)).toEqual(Array(4).fill('deadline'));
    expect(killed.filter((line) => isAlive(line.pid as number))).toEqual([]);
    // Remembered: asked again, the same answer without a render (no process stopped again).
    expect(await get(`/i/${big}?q=90&f=avif`)).toMatchObject({ status: 422 });
    expect(lines.filter((line) => line.message === 'render process stopped')).toHaveLength(4);
  }, 60_000);
});
