// Critical-path waits per main path (docs/PERFORMANCE.md "Waits on the critical path"): each path's request
// through its production handler, in process, with the wait counter on every AWS client; a path that waits
// on AWS more often than its floor (test/perf/floors.ts) fails. A count, not a timing: on AWS every wait
// costs a round trip however fast the stand-ins answer.
import { tracingChannel } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_HASH_CHANNEL } from '#lib/accounts/passwords.ts';
import { config } from '#lib/platform/config/index.ts';
import { documentedFloors, FLOORS, floorOf } from '#test/perf/floors.ts';
import { awsRoundTrips, describeSteps, WaitCounter } from '#test/support/aws-waits.ts';
import { MAIN_PATHS, type MainPath, mainPaths } from '#test/support/main-paths.ts';
import { provisionTestStack } from '#test/support/stack.ts';

let paths: Awaited<ReturnType<typeof mainPaths>>['paths'];
// Answers held back as AWS would answer them (test/support/aws-waits.ts awsRoundTrips), so the count does
// not depend on how fast the stand-ins answered this time.
const counter = new WaitCounter(false, awsRoundTrips);

beforeAll(async () => {
  await provisionTestStack();
  ({ paths } = await mainPaths());
  // Each path once before counting: what a container does once (the signing key, lazy clients) is the cold
  // path's (the bench's cold_path_ratio_max), not every request's.
  for (const name of MAIN_PATHS) await paths[name].request(await paths[name].prepare());
  counter.installOnAws(config.aws);
}, 60_000);

afterAll(() => counter.uninstall());

describe('critical-path waits stay at each path’s floor', () => {
  it.each(MAIN_PATHS)('%s waits on AWS no more often than its floor', async (name: MainPath) => {
    const path = paths[name];
    const floor = floorOf(name);
    expect(floor, `${name} has a floor in test/perf/floors.ts`).not.toBeNull();

    // Up to three requests, the fewest waits standing. A starved CPU can only add waits: work between two
    // calls that outlasts the held round trip of a third ends the step early (the record's transaction
    // starting once the usage reads are back but the bytes' PUT is not). It can never join calls one
    // awaits after another, so the fewest is the path's count, and a call made sequential shows in every
    // request (a loaded CI run once counted upload 3 against its floor of 2, alone 2 every time).
    const runs: string[] = [];
    let fewest = Number.POSITIVE_INFINITY;
    for (let attempt = 0; attempt < 3 && fewest > floor!; attempt++) {
      const input = await path.prepare();
      const counted = await counter.measure(() => path.request(input));
      fewest = Math.min(fewest, counted.waits);
      runs.push(`${counted.waits}: ${describeSteps(counted.steps)}`);
    }

    expect(
      fewest,
      `${name} waits more than its floor ${floor}; the requests: ${runs.join('; ')}`,
    ).toBeLessThanOrEqual(floor!);
  });

  it('counts calls sent together as one wait', async () => {
    const path = paths.me;
    const inputs = await Promise.all([path.prepare(), path.prepare()]);

    const together = await counter.measure(() => Promise.all(inputs.map((input) => path.request(input))));
    const apart = await counter.measure(async () => {
      for (const input of inputs) await path.request(input);
    });

    expect(together.calls).toBe(apart.calls);
    expect(together.waits).toBe(apart.waits / 2);
  });

  it('counts no wait for a call sent while the password hash runs, and a wait for one sent after it', async () => {
    const path = paths.me;
    const [alone, during, after] = await Promise.all([path.prepare(), path.prepare(), path.prepare()]);
    const hashing = tracingChannel(PASSWORD_HASH_CHANNEL);

    const single = await counter.measure(() => path.request(alone));
    // The channel lib/accounts/passwords.ts publishes each hash on, here around work that ends only once the
    // call sent during it has answered: which call ran during the hash does not hang on either's speed.
    const counted = await counter.measure(async () => {
      await hashing.tracePromise(() => path.request(during), {});
      await path.request(after);
    });

    expect(single.waits).toBe(1);
    expect(counted.calls).toBe(2 * single.calls);
    expect(counted.waits).toBe(1);
    const [operations] = single.steps;
    expect(describeSteps(counted.steps)).toBe(
      `${operations!.map((operation) => `${operation} (beside the password hash)`).join(' ‖ ')} → ${operations!.join(' ‖ ')}`,
    );
  });
});

describe('docs/PERFORMANCE.md', () => {
  it('gives every path the floor the test holds it to', () => {
    const documented = documentedFloors(readFileSync('docs/PERFORMANCE.md', 'utf8'));

    const expected = new Map(FLOORS.map((entry) => [entry.path, String(entry.floor ?? 'not built yet')]));
    expect(documented).toEqual(expected);
  });
});
