// The cold-start check of the settings (lib/platform/config/fast-path.ts) against the zod schema it stands in for:
// the shape it reads is the schema's own (shape.json is current), whatever it vouches for zod accepts with
// the same result, it vouches for the settings the service really runs with (so a cold start builds no
// zod schema), and where it doubts, loadConfig's answer and messages are zod's.
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WORKER_NAMES } from '#functions/needs.ts';
import { localFunctionEnvironment } from '#infra/local/app.ts';
import { stageConfigFile } from '#infra/stage-config.ts';
import { FUNCTION_GROUPS } from '#lib/http/routes.ts';
import { parseByShape } from '#lib/platform/config/fast-path.ts';
import { ConfigError, configShape, loadConfig, readRawSettings } from '#lib/platform/config/load.ts';
import { configSchema } from '#lib/platform/config/schema.ts';
import { currentConfigShape, type ShapeNode } from '#lib/platform/config/shape.ts';

/** zod's verdict: the parsed settings, or undefined when it refuses them. */
function byZod(raw: unknown): unknown {
  const parsed = configSchema().safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/** Values for one leaf: valid ones, edge cases and wrong ones, from its shape. */
function leafValues(node: ShapeNode): fc.Arbitrary<unknown> {
  switch (node.type) {
    case 'default':
    case 'prefault':
    case 'optional':
      return fc.oneof(fc.constant(undefined), leafValues(node.inner));
    case 'pipe':
      return leafValues(node.in);
    case 'boolean':
      return fc.oneof(fc.boolean(), fc.constantFrom('yes', 1, null));
    case 'enum':
      return fc.oneof(fc.constantFrom(...node.values), fc.constantFrom('other', '', 3));
    case 'number': {
      const low = node.min?.value ?? -10;
      const high = node.max?.value ?? 10;
      return fc.oneof(
        fc.constantFrom(low, high, low - 1, high + 1, (low + high) / 2, 1.5, Number.NaN, Infinity, '5'),
        fc.integer({ min: Math.max(low, -1e9), max: Math.min(high, 1e9) }),
      );
    }
    case 'array':
      return fc.oneof(fc.array(leafValues(node.element), { maxLength: 3 }), fc.constantFrom('a,b', null));
    case 'string': {
      const samples: Array<fc.Arbitrary<unknown>> = [
        fc.string({ maxLength: 40 }),
        fc.constantFrom('', ' ', '  padded  ', 'x'.repeat(65), 'a\tb', 42, null),
      ];
      if (node.url) {
        samples.push(
          fc.constantFrom(
            'http://localhost:3000',
            'https://api.example.com/',
            'https://api.example.com//',
            ' https://a.example/x ',
            'http://127.0.0.1:8000/path?q=1',
            'https://exa\tmple.com',
            'ftp://files.example.com',
            'https:/missing-slash',
            'http:example.com',
            'not a url',
          ),
        );
      }
      for (const check of node.checks) {
        if (check.check === 'pattern') samples.push(fc.stringMatching(new RegExp(check.source, check.flags)));
        if (check.check === 'rule') samples.push(fc.string({ minLength: 30, maxLength: 34, unit: 'binary' }));
      }
      return fc.oneof(...samples);
    }
    case 'object':
      return settingsOf(node);
    case 'transform':
      throw new Error('a transform is reached through its pipe');
  }
}

/** Whole sections: any subset of keys, each with a leaf value; sometimes the section is not an object. */
function settingsOf(node: Extract<ShapeNode, { type: 'object' }>): fc.Arbitrary<unknown> {
  const record = fc.record(
    Object.fromEntries(Object.entries(node.shape).map(([key, child]) => [key, leafValues(child)])),
    { requiredKeys: [] },
  );
  return fc.oneof({ weight: 9, arbitrary: record }, { weight: 1, arbitrary: fc.constantFrom('text', [], 7) });
}

/** Only values zod takes, so the fast path must vouch for every one. */
function validSettings(node: ShapeNode): fc.Arbitrary<unknown> {
  return leafValues(node).filter((value) => byZod(value) !== undefined);
}

describe('the settings at a cold start', () => {
  it('reads the shape of the schema as it stands (npm run config:shape rewrites shape.json)', () => {
    expect(configShape).toEqual(JSON.parse(JSON.stringify(currentConfigShape())));
  });

  it('vouches only for settings zod accepts, with the same result', () => {
    fc.assert(
      fc.property(leafValues(configShape), (raw) => {
        const vouched = parseByShape(configShape, structuredClone(raw));
        if (vouched !== undefined) expect(vouched).toEqual(byZod(structuredClone(raw)));
      }),
      { numRuns: 3000 },
    );
  });

  it('vouches for every setting zod accepts that the service can be given', () => {
    fc.assert(
      fc.property(validSettings(configShape), (raw) => {
        expect(parseByShape(configShape, structuredClone(raw))).toEqual(byZod(structuredClone(raw)));
      }),
      { numRuns: 1000 },
    );
  });

  it('vouches for what every function is given locally and in each stage, so no zod schema is built', () => {
    const local = loadConfig({ env: { APP_CONFIG: 'infra/config/local.json' } });
    const environments: Array<Record<string, string | undefined>> = [
      ...[...FUNCTION_GROUPS, ...WORKER_NAMES].map((group) => localFunctionEnvironment(group, local)),
      // As the stack gives a stage file to its functions (infra/stack.ts): without `infra` and `base_url`.
      ...['dev', 'prod'].map((stage) => {
        const {
          infra: _infra,
          base_url: _baseUrl,
          ...appConfig
        } = JSON.parse(readFileSync(stageConfigFile(stage), 'utf8')) as Record<string, unknown>;
        return {
          APP_CONFIG_JSON: JSON.stringify({ ...appConfig, stage }),
          TABLE_NAME: 'service-prod-Table1A2B3C',
          BUCKET_NAME: 'service-prod-files-1a2b3c',
          MASTER_KEY__PROVIDER: 'kms',
          MASTER_KEY__KMS_KEY_ID:
            'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
          FRONT_DOOR__PROVIDER: 'secrets-manager',
          FRONT_DOOR__SECRET_ID: 'service-prod-origin',
          AWS__EVENT_BUS_NAME: 'service-prod-events',
          PAYMENT__NOTIFY_BASE_URL: 'https://abc.lambda-url.eu-west-1.on.aws',
          CDN__DISTRIBUTION_ID: 'E1ABCDEF2GHIJ',
          BASE_URL: 'https://img.example.com',
          AWS_REGION: 'eu-west-1',
        };
      }),
    ];
    for (const env of environments) {
      const { raw, problems } = readRawSettings({ env });
      expect(problems).toEqual([]);
      const vouched = parseByShape(configShape, structuredClone(raw));
      expect(vouched).toBeDefined();
      expect(vouched).toEqual(byZod(raw));
    }
  });

  it('names problems in zod words when it cannot vouch', () => {
    const env = {
      APP_CONFIG_JSON: JSON.stringify({ payment: { channel_b: { api_v3_key: 'short' } } }),
      TABLE_NAME: 'x',
      FRONT_DOOR__PROVIDER: 'secrets-manager',
    };
    expect(() => loadConfig({ env })).toThrow(ConfigError);
    try {
      loadConfig({ env });
    } catch (error) {
      expect((error as ConfigError).problems).toEqual([
        'table_name: must be a valid DynamoDB table name',
        'front_door.secret_id: is required when front_door.provider is secrets-manager',
        'payment.channel_b.api_v3_key: must be exactly 32 bytes',
      ]);
    }
  });
});
