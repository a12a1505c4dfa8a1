import { beforeAll, describe, expect, it } from 'vitest';
import { NONCURRENT_VERSION_EXPIRY_DAYS, PENDING_UPLOAD_PREFIX } from '#infra/data.ts';
import { LEGACY_INDEX_STEPS, LEGACY_INDEXES, queriedIndexesAt, tableIndexesAt } from '#infra/index-move.ts';
import { DEFAULT_BACKUP_RETENTION_DAYS } from '#infra/infra-settings.ts';
import { SERVICE_NAME } from '#infra/service-app.ts';
import { StageConfigError, stageConfigFrom } from '#infra/stage-config.ts';
import { FUNCTION_GROUPS } from '#lib/http/routes.ts';
import { createTableInput, TABLE } from '#lib/platform/db/keys.ts';
import {
  appConfigOf,
  completedProd,
  DEV_FILE,
  type Json,
  resourcesOf,
  type Synth,
  synth,
  synthDevAndProd,
} from './stack-helpers.ts';

let dev: Synth;
let prod: Synth;

beforeAll(() => {
  ({ dev, prod } = synthDevAndProd());
}, 60_000);

describe('storage', () => {
  it('builds the table from lib/platform/db/keys.ts with on-demand billing, TTL and point-in-time recovery', () => {
    const expected = createTableInput('unused');
    const [[, table]] = resourcesOf(dev, 'AWS::DynamoDB::Table') as [[string, Json]];
    const props = table.Properties;
    expect(props.BillingMode).toBe('PAY_PER_REQUEST');
    expect(props.KeySchema).toEqual(expected.KeySchema);
    expect(new Set(props.AttributeDefinitions)).toEqual(new Set(expected.AttributeDefinitions));
    expect(
      props.GlobalSecondaryIndexes.map((index: Json) => ({
        IndexName: index.IndexName,
        KeySchema: index.KeySchema,
        Projection: index.Projection,
      })),
    ).toEqual(expected.GlobalSecondaryIndexes);
    expect(props.TimeToLiveSpecification).toEqual({ AttributeName: TABLE.ttlAttribute, Enabled: true });
    expect(props.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
  });

  it('rotates the master key', () => {
    dev.template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
  });

  it('keeps the files bucket private, encrypted, TLS-only, and expires abandoned uploads', () => {
    const filesId = dev.stack.getLogicalId(dev.stack.bucket.node.defaultChild as never);
    const bucket = dev.resources[filesId]!.Properties;
    expect(bucket.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(
      bucket.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault,
    ).toEqual({
      SSEAlgorithm: 'AES256',
    });
    expect(bucket.LifecycleConfiguration.Rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Prefix: PENDING_UPLOAD_PREFIX, ExpirationInDays: 1 }),
      ]),
    );
    expect(bucket.CorsConfiguration.CorsRules[0]).toMatchObject({
      AllowedMethods: ['PUT'],
      AllowedOrigins: ['http://localhost:5173'],
    });
    const [, policy] = resourcesOf(dev, 'AWS::S3::BucketPolicy').find(
      ([, candidate]) => candidate.Properties.Bucket.Ref === filesId,
    )!;
    expect(policy.Properties.PolicyDocument.Statement).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      ]),
    );
  });
});

/** A table's indexes as a CloudFormation update sees them: name and everything that cannot change in place. */
function indexShapes(indexes: Json[]): string[] {
  return indexes.map((index) =>
    JSON.stringify([
      index.IndexName,
      index.KeySchema,
      index.Projection.ProjectionType,
      index.Projection.NonKeyAttributes ?? [],
    ]),
  );
}

const templateIndexes = (s: Synth): Json[] =>
  (resourcesOf(s, 'AWS::DynamoDB::Table')[0]![1] as Json).Properties.GlobalSecondaryIndexes;

/** Attribute names of credentials or of what derives from one (a file's content `hash` is neither). */
const CREDENTIAL = /password|secret|digest|sealed|_enc$|recovery|^session|^token$|token_hash|_hash$/;

describe('indexes', () => {
  it('project only listed attributes, never every attribute and never a credential', () => {
    const indexes = templateIndexes(dev);

    expect(indexes.map((index) => index.IndexName).sort()).toEqual(TABLE.indexes.map((i) => i.name).sort());
    let projected = 0;
    for (const index of indexes) {
      expect(['INCLUDE', 'KEYS_ONLY'], index.IndexName).toContain(index.Projection.ProjectionType);
      const names: string[] = index.Projection.NonKeyAttributes ?? [];
      expect(
        names.filter((name) => CREDENTIAL.test(name)),
        index.IndexName,
      ).toEqual([]);
      projected += names.length;
    }
    // DynamoDB's limit across all indexes of a table.
    expect(projected).toBeLessThanOrEqual(100);
  });

  it('move a table of the first indexes one index per deploy, each read only once an earlier deploy built it', () => {
    const steps = [
      LEGACY_INDEXES,
      ...LEGACY_INDEX_STEPS.map((step) => tableIndexesAt(step)),
      tableIndexesAt(),
    ];
    const shapes = steps.map((indexes) =>
      indexShapes(
        indexes.map((index) => ({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection: index.projection,
        })),
      ),
    );
    for (let n = 1; n < shapes.length; n += 1) {
      const before = new Set(shapes[n - 1]);
      const after = new Set(shapes[n]);
      const changed =
        [...before].filter((x) => !after.has(x)).length + [...after].filter((x) => !before.has(x)).length;
      expect(changed, `step ${n}: ${LEGACY_INDEX_STEPS[n - 1] ?? 'done'}`).toBe(1);
    }
    // What the functions query at a step exists already in the table the step starts from.
    LEGACY_INDEX_STEPS.forEach((step, n) => {
      const before = new Set(steps[n]!.map((index) => index.name));
      const queried = TABLE.indexes.map((index) => queriedIndexesAt(step)[index.name] ?? index.name);
      // `none`: the index has no older stand-in and its listing reads as empty until it is built.
      expect(
        queried.filter((name) => name !== 'none' && !before.has(name)),
        step,
      ).toEqual([]);
    });
  });

  it('builds a step’s indexes and has every function query the ones built before it', () => {
    const step = LEGACY_INDEX_STEPS[1]!;
    const moving = synth({
      config: stageConfigFrom('dev', { ...DEV_FILE, infra: { ...DEV_FILE.infra, legacy_indexes: step } }),
    });

    expect(indexShapes(templateIndexes(moving)).sort()).toEqual(
      indexShapes(
        tableIndexesAt(step).map((index) => ({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection: index.projection,
        })),
      ).sort(),
    );
    for (const group of FUNCTION_GROUPS) {
      expect(appConfigOf(moving, group).table_indexes, group).toEqual({
        owner: 'owner',
        listing: 'gsi2',
        due: 'none',
      });
      expect(appConfigOf(dev, group).table_indexes, group).toEqual({
        owner: 'owner',
        listing: 'listing',
        due: 'due',
      });
    }
    expect(() => stageConfigFrom('dev', { ...DEV_FILE, table_indexes: { owner: 'gsi1' } })).toThrow(
      /table_indexes: is set by the deployment/,
    );
  }, 60_000);
});

describe('prod stage', () => {
  it('turns the mock payment gateway off in every function', () => {
    for (const group of FUNCTION_GROUPS) {
      expect(appConfigOf(prod, group).payment.mock.enabled, group).toBe(false);
    }
  });

  it('retains the table with deletion protection, and the bucket and key', () => {
    prod.template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: { DeletionProtectionEnabled: true },
    });
    prod.template.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Retain' });
    const filesId = prod.stack.getLogicalId(prod.stack.bucket.node.defaultChild as never);
    expect(prod.resources[filesId]!.DeletionPolicy).toBe('Retain');
  });

  it('lets dev data go with the stack', () => {
    dev.template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
    const [[, table]] = resourcesOf(dev, 'AWS::DynamoDB::Table') as [[string, Json]];
    expect(table.Properties.DeletionProtectionEnabled).toBe(false);
  });
});

describe('data safety', () => {
  const filesOf = (s: Synth): Json =>
    s.resources[s.stack.getLogicalId(s.stack.bucket.node.defaultChild as never)]!;

  it('versions the retained files bucket and expires old versions after 30 days', () => {
    const bucket = filesOf(prod).Properties;

    expect(bucket.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(bucket.LifecycleConfiguration.Rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          NoncurrentVersionExpiration: { NoncurrentDays: NONCURRENT_VERSION_EXPIRY_DAYS },
        }),
      ]),
    );
    expect(NONCURRENT_VERSION_EXPIRY_DAYS).toBe(30);
  });

  it('expires renditions not requested for images.derived_ttl_days (30), their old versions after a day', () => {
    const rules = filesOf(prod).Properties.LifecycleConfiguration.Rules as Json[];

    expect(rules).toContainEqual(
      expect.objectContaining({
        Prefix: 'derived/',
        ExpirationInDays: 30,
        NoncurrentVersionExpiration: { NoncurrentDays: 1 },
        Status: 'Enabled',
      }),
    );
  });

  it('expires account exports (exports/) after 2 days, their old versions after a day', () => {
    const rules = filesOf(prod).Properties.LifecycleConfiguration.Rules as Json[];

    expect(rules).toContainEqual(
      expect.objectContaining({
        Prefix: 'exports/',
        ExpirationInDays: 2,
        NoncurrentVersionExpiration: { NoncurrentDays: 1 },
        Status: 'Enabled',
      }),
    );
  });

  it('expires old versions under incoming/ after a day, and their expired delete markers', () => {
    const rules = filesOf(prod).Properties.LifecycleConfiguration.Rules as Json[];

    expect(rules).toContainEqual(
      expect.objectContaining({
        Prefix: PENDING_UPLOAD_PREFIX,
        NoncurrentVersionExpiration: { NoncurrentDays: 1 },
        ExpiredObjectDeleteMarker: true,
        Status: 'Enabled',
      }),
    );
    expect(PENDING_UPLOAD_PREFIX).toBe('incoming/');
  });

  it('keeps dev buckets unversioned and empties them on destroy; prod buckets are never emptied', () => {
    expect(filesOf(dev).Properties.VersioningConfiguration).toBeUndefined();
    const emptied = (s: Synth) =>
      resourcesOf(s, 'Custom::S3AutoDeleteObjects')
        .map(([, resource]) => resource.Properties.BucketName.Ref)
        .sort();
    const bucketIds = resourcesOf(dev, 'AWS::S3::Bucket')
      .map(([id]) => id)
      .sort();

    expect(bucketIds).toHaveLength(2);
    expect(emptied(dev)).toEqual(bucketIds);
    expect(emptied(prod)).toEqual([]);
  });

  it('names the master key alias/<service>-<stage>-master', () => {
    for (const [s, stage] of [
      [dev, 'dev'],
      [prod, 'prod'],
    ] as const) {
      const keyId = s.stack.getLogicalId(s.stack.masterKey.node.defaultChild as never);
      s.template.hasResourceProperties('AWS::KMS::Alias', {
        AliasName: `alias/${SERVICE_NAME}-${stage}-master`,
        TargetKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] },
      });
    }
  });
});

describe('table backup', () => {
  it('backs the prod table up daily with AWS Backup, kept for the default retention', () => {
    const tableId = prod.stack.getLogicalId(prod.stack.table.node.defaultChild as never);
    const [[, plan]] = resourcesOf(prod, 'AWS::Backup::BackupPlan') as [[string, Json]];
    expect(plan.Properties.BackupPlan.BackupPlanRule).toEqual([
      expect.objectContaining({
        RuleName: 'daily',
        ScheduleExpression: 'cron(0 3 * * ? *)',
        Lifecycle: { DeleteAfterDays: DEFAULT_BACKUP_RETENTION_DAYS },
      }),
    ]);
    const [[, selection]] = resourcesOf(prod, 'AWS::Backup::BackupSelection') as [[string, Json]];
    expect(JSON.stringify(selection.Properties.BackupSelection.Resources)).toContain(tableId);
    expect(resourcesOf(prod, 'AWS::Backup::BackupVault')).toHaveLength(1);
  });

  it('has none in dev unless asked, and honours infra.backup in either direction', () => {
    expect(resourcesOf(dev, 'AWS::Backup::BackupPlan')).toEqual([]);
    expect(
      stageConfigFrom('dev', { ...DEV_FILE, infra: { ...DEV_FILE.infra, backup: { retention_days: 7 } } })
        .infra.backup,
    ).toEqual({
      retentionDays: 7,
    });
    expect(stageConfigFrom('prod', completedProd({ infra: { backup: false } })).infra.backup).toBeUndefined();
    expect(() => stageConfigFrom('dev', { ...DEV_FILE, infra: { ...DEV_FILE.infra, backup: true } })).toThrow(
      StageConfigError,
    );
  });
});
