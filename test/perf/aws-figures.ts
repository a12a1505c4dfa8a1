// The figures that hold on AWS, per main path: critical-path waits against each path's floor, and the CPU
// of this process per request (the stand-ins run in processes of their own) against an SDK-only baseline
// that sends the same calls, in the same steps, and does only the work no implementation can skip.
// Imported only after bench.ts has pointed the configuration at the stand-ins.
import { createHash, randomUUID } from 'node:crypto';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { verifyPassword } from '#lib/accounts/passwords.ts';
import { PRESIGN_TTL_SECONDS } from '#lib/files/pending.ts';
import { askedRendition, presetsOf } from '#lib/files/rendition-access.ts';
import type { ApiEvent } from '#lib/http/event.ts';
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { s3Client } from '#lib/platform/aws/s3.ts';
import { config } from '#lib/platform/config/index.ts';
import { awsRoundTrips, type SentCall, WaitCounter } from '#test/support/aws-waits.ts';
import { MAIN_PATHS, type MainPath, mainPaths } from '#test/support/main-paths.ts';
import { floorOf } from './floors.ts';
import { sharpAloneWebp } from './sharp-alone.ts';
import { median, round } from './stats.ts';

export interface PathAwsFigures {
  waits: number;
  floor: number | null;
  steps: string;
  calls: number;
  /** Median CPU ms of this process per request, and of the baseline. */
  cpu_ms: number;
  baseline_cpu_ms: number;
  cpu_ratio: number;
}

export interface AwsFigures {
  paths: Record<MainPath, PathAwsFigures>;
  /** Waits above the floors, summed over the paths. */
  waits_over_floor: number;
  cpu_ratio_max: number;
  cpu_iterations: number;
}

// biome-ignore lint/suspicious/noExplicitAny: commands of many input shapes
const DYNAMO_COMMANDS: Record<string, new (input: any) => any> = {
  GetItem: GetCommand,
  BatchGetItem: BatchGetCommand,
  PutItem: PutCommand,
  UpdateItem: UpdateCommand,
  DeleteItem: DeleteCommand,
  Query: QueryCommand,
  TransactWriteItems: TransactWriteCommand,
  BatchWriteItem: BatchWriteCommand,
};
// biome-ignore lint/suspicious/noExplicitAny: commands of many input shapes
const S3_COMMANDS: Record<string, new (input: any) => any> = {
  PutObject: PutObjectCommand,
  GetObject: GetObjectCommand,
  CopyObject: CopyObjectCommand,
  DeleteObject: DeleteObjectCommand,
  HeadObject: HeadObjectCommand,
};

/**
 * Sends one recorded call again with the bare SDK client; a refused condition is still a round trip.
 * Answers the bytes of an object it read (a GetObject), for the work done on them after the calls.
 */
async function resend(call: SentCall): Promise<Uint8Array | undefined> {
  const dynamo = DYNAMO_COMMANDS[call.name];
  const s3 = S3_COMMANDS[call.name];
  try {
    if (call.service === 'dynamodb' && dynamo) await dynamoClient(config.aws).send(new dynamo(call.input));
    else if (call.service === 's3' && s3) {
      const output = await s3Client(config.aws).send(new s3(call.input));
      // Reading the bytes of an object is work no implementation skips.
      const body = (output as { Body?: { transformToByteArray(): Promise<Uint8Array> } }).Body;
      if (body) {
        const bytes = await body.transformToByteArray();
        createHash('sha256').update(bytes);
        return bytes;
      }
    } else throw new Error(`no baseline command for ${call.service}.${call.name}`);
  } catch (error) {
    const name = (error as { name?: string }).name ?? '';
    if (!/ConditionalCheckFailed|TransactionCanceled|NoSuchKey/.test(name)) throw error;
  }
  return undefined;
}

/**
 * The work a path cannot skip besides its calls: API Gateway's base64 body decoded and hashed, argon2, the
 * SigV4 signature of the presigned PUT (the URL is what presign answers; signing it sends nothing), or a
 * rendition's render of the original (`read`: the bytes the baseline's GetObjects read; the largest is the
 * original, the stored copy a first render looks for being missing) with sharp alone, as the render
 * function's pipeline does it.
 */
function unskippable(path: MainPath, passwordHash: string, password: string) {
  return async (event: ApiEvent, read: readonly Uint8Array[]) => {
    if (path === 'rendition') {
      const limits = { widths: config.images.widths, qualities: config.images.qualities };
      const { params } = askedRendition(
        new URLSearchParams(event.rawQueryString ?? ''),
        presetsOf(config.images.presets, limits),
        limits,
      );
      if (params.format !== 'webp') throw new Error('the rendition baseline renders WebP only');
      const original = read.reduce<Uint8Array | undefined>(
        (largest, bytes) => (largest === undefined || bytes.length > largest.length ? bytes : largest),
        undefined,
      );
      if (!original) throw new Error('the rendition baseline read no original');
      await sharpAloneWebp(original, {
        width: params.width ?? 0,
        quality: params.quality,
        maxInputPixels: config.images.max_input_pixels,
      });
    }
    if (path === 'login') {
      if (!(await verifyPassword(passwordHash, password))) throw new Error('verify failed');
    }
    if (path === 'presign' && event.body) {
      const body = Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8').toString();
      const { mime_type, size } = JSON.parse(body) as { mime_type: string; size: number };
      await getSignedUrl(
        s3Client(config.aws),
        new PutObjectCommand({
          Bucket: config.bucket_name,
          Key: `incoming/${randomUUID()}.png`,
          ContentType: mime_type,
          ContentLength: size,
        }),
        {
          expiresIn: PRESIGN_TTL_SECONDS,
          signingDate: new Date(),
          signableHeaders: new Set(['content-type', 'content-length']),
        },
      );
    }
    if (path === 'upload' && event.body) {
      createHash('sha256').update(Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8'));
    }
  };
}

async function cpuMs(run: () => Promise<unknown>): Promise<number> {
  const started = process.cpuUsage();
  await run();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

export async function measureAwsFigures(options: {
  iterations: number;
  loginIterations: number;
  uploadBytes: () => Buffer;
  /** The paths to measure (default: all). */
  only?: readonly string[];
}): Promise<AwsFigures> {
  const { paths, user } = await mainPaths({ uploadBytes: options.uploadBytes });
  const passwordHash = (user.account as { password_hash?: string }).password_hash ?? '';

  // Answers held back as AWS answers them (awsRoundTrips), as in the waits test: the same counts.
  const counter = new WaitCounter(true, awsRoundTrips).installOnAws(config.aws);
  const figures = {} as Record<MainPath, PathAwsFigures>;
  try {
    for (const name of MAIN_PATHS.filter((path) => !options.only || options.only.includes(path))) {
      const path = paths[name];
      // The path once first, just before it is counted: a container's one-time work belongs to the cold
      // path, and what a container refreshes every so often (the payment settings' version, every 30 s)
      // is spread over the requests of that time, not paid by each.
      await path.request(await path.prepare());
      const input = await path.prepare();
      const counted = await counter.measure(() => path.request(input));
      const floor = floorOf(name);
      const extra = unskippable(name, passwordHash, user.password);
      const subject: number[] = [];
      const baseline: number[] = [];
      const iterations = name === 'login' ? options.loginIterations : options.iterations;
      for (let i = 0; i < iterations + 2; i++) {
        const next = await path.prepare();
        const ours = () => path.request(next);
        const theirs = async () => {
          const read: Uint8Array[] = [];
          for (const step of counted.sentSteps) {
            for (const bytes of await Promise.all(step.map(resend))) if (bytes) read.push(bytes);
          }
          // After the calls, as a render needs the bytes read; what is counted is CPU, which the order of
          // this work against the calls does not change.
          await extra(next as unknown as ApiEvent, read);
        };
        // Alternated, the order flipping every iteration; the first two are warm-up.
        const [a, b] = i % 2 === 0 ? [ours, theirs] : [theirs, ours];
        const first = await cpuMs(a);
        const second = await cpuMs(b);
        if (i < 2) continue;
        subject.push(i % 2 === 0 ? first : second);
        baseline.push(i % 2 === 0 ? second : first);
      }
      const cpu = median(subject);
      const base = median(baseline);
      figures[name] = {
        waits: counted.waits,
        floor,
        steps: counted.steps.map((step) => step.join(' ‖ ')).join(' → '),
        calls: counted.calls,
        cpu_ms: round(cpu, 3),
        baseline_cpu_ms: round(base, 3),
        cpu_ratio: round(cpu / base, 2),
      };
    }
  } finally {
    counter.uninstall();
  }
  const all = Object.values(figures);
  return {
    paths: figures,
    waits_over_floor: all.reduce(
      (sum, entry) => sum + Math.max(0, entry.waits - (entry.floor ?? entry.waits)),
      0,
    ),
    cpu_ratio_max: Math.max(...all.map((entry) => entry.cpu_ratio)),
    cpu_iterations: options.iterations,
  };
}
