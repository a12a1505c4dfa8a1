// The deployed-shape test's Secrets Manager: GetSecretValue is an IAM call on the secret's ARN, served by a
// fake that keeps versions as put-secret-value does, and resolves the template's dynamic references.
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startAwsGateway } from '#test/support/deployed/aws-gateway.ts';
import { createFakeEventBridge } from '#test/support/deployed/fake-eventbridge.ts';
import { createFakeKms } from '#test/support/deployed/fake-kms.ts';
import {
  createFakeSecretsManager,
  generateSecretString,
} from '#test/support/deployed/fake-secrets-manager.ts';
import { iamCallsOf } from '#test/support/deployed/iam-calls.ts';
import { ACCOUNT, CLIENT, client, REGION } from './harness.ts';

const ORIGIN = `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:OriginSecret-AbCdEf`;
const OTHER = `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:Other-XyZwVu`;

const signed = (target: string, body: object) => ({
  method: 'POST',
  url: '/',
  headers: {
    authorization: `AWS4-HMAC-SHA256 Credential=AKID/20261122/${REGION}/secretsmanager/aws4_request, SignedHeaders=host, Signature=x`,
    'x-amz-target': target,
  },
  body: Buffer.from(JSON.stringify(body)),
});

describe('iamCallsOf: Secrets Manager', () => {
  it('maps GetSecretValue to its action on the secret named by ARN, or by name with the random suffix', () => {
    const where = { region: REGION, account: ACCOUNT };

    expect(iamCallsOf(signed('secretsmanager.GetSecretValue', { SecretId: ORIGIN }), where)).toEqual({
      service: 'secretsmanager',
      operation: 'GetSecretValue',
      calls: [{ action: 'secretsmanager:GetSecretValue', resource: ORIGIN }],
    });
    expect(iamCallsOf(signed('secretsmanager.GetSecretValue', { SecretId: 'Other' }), where).calls).toEqual([
      {
        action: 'secretsmanager:GetSecretValue',
        resource: `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:Other-??????`,
      },
    ]);
    expect(
      iamCallsOf(signed('secretsmanager.PutSecretValue', { SecretId: ORIGIN }), where).calls[0],
    ).toMatchObject({ unrecognised: true });
  });
});

describe('fake Secrets Manager', () => {
  it('generates the template’s JSON and keeps the previous version when a new one is put', () => {
    const generated = JSON.parse(
      generateSecretString({ SecretStringTemplate: '{}', GenerateStringKey: 'current', PasswordLength: 48 }),
    ) as { current: string };
    const secrets = createFakeSecretsManager({ [ORIGIN]: JSON.stringify(generated) });

    const version = secrets.put(
      ORIGIN,
      JSON.stringify({ current: 'n'.repeat(48), previous: generated.current }),
    );

    expect(generated.current).toMatch(/^[A-Za-z0-9]{48}$/);
    expect(JSON.parse(secrets.current(ORIGIN))).toEqual({
      current: 'n'.repeat(48),
      previous: generated.current,
    });
    const previous = secrets.handle('GetSecretValue', { SecretId: ORIGIN, VersionStage: 'AWSPREVIOUS' });
    expect(previous.body).toMatchObject({ SecretString: JSON.stringify(generated) });
    expect(secrets.handle('GetSecretValue', { SecretId: ORIGIN, VersionId: version }).body).toMatchObject({
      VersionStages: ['AWSCURRENT'],
    });
  });

  it('resolves dynamic references by JSON key, stage or version id, and fails on a missing one', () => {
    const secrets = createFakeSecretsManager({ [ORIGIN]: JSON.stringify({ current: 'a'.repeat(40) }) });
    const first = secrets.handle('GetSecretValue', { SecretId: ORIGIN }).body as { VersionId: string };
    secrets.put(ORIGIN, JSON.stringify({ current: 'b'.repeat(40) }));

    expect(secrets.resolveReferences(`{{resolve:secretsmanager:${ORIGIN}:SecretString:current::}}`)).toBe(
      'b'.repeat(40),
    );
    expect(
      secrets.resolveReferences(
        `x={{resolve:secretsmanager:${ORIGIN}:SecretString:current::${first.VersionId}}}`,
      ),
    ).toBe(`x=${'a'.repeat(40)}`);
    expect(() =>
      secrets.resolveReferences(`{{resolve:secretsmanager:${OTHER}:SecretString:current::}}`),
    ).toThrow(/missing secret/);
  });
});

describe('AWS gateway with the AWS SDK: Secrets Manager', () => {
  async function gatewayFor(resource: string) {
    const secrets = createFakeSecretsManager({
      [ORIGIN]: JSON.stringify({ current: 'o'.repeat(48) }),
      [OTHER]: JSON.stringify({ current: 'x'.repeat(48) }),
    });
    const gateway = await startAwsGateway({
      functionName: 'meta',
      policy: [{ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: resource }],
      region: REGION,
      account: ACCOUNT,
      upstream: { dynamodb: 'http://127.0.0.1:9', s3: 'http://127.0.0.1:9' },
      kms: createFakeKms({ keyArns: [] }),
      events: createFakeEventBridge(),
      secrets,
    });
    onTestFinished(() => gateway.close());
    return { gateway, secrets, sdk: client(SecretsManagerClient, { ...CLIENT, endpoint: gateway.endpoint }) };
  }

  it('serves the granted secret and refuses any other as AccessDenied, naming it', async () => {
    const { gateway, secrets, sdk } = await gatewayFor(ORIGIN);

    const granted = await sdk.send(new GetSecretValueCommand({ SecretId: ORIGIN }));
    const refused = sdk.send(new GetSecretValueCommand({ SecretId: OTHER }));

    expect(JSON.parse(granted.SecretString!)).toEqual({ current: 'o'.repeat(48) });
    await expect(refused).rejects.toMatchObject({ name: 'AccessDeniedException' });
    expect(gateway.denials).toEqual([
      {
        functionName: 'meta',
        action: 'secretsmanager:GetSecretValue',
        resource: OTHER,
        operation: 'GetSecretValue',
      },
    ]);
    expect(secrets.reads).toEqual([ORIGIN]);
    expect(gateway.errors).toEqual([]);
  });
});
