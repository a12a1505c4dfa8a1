// An in-process stand-in for the Secrets Manager JSON 1.1 API (GetSecretValue), holding the secrets the
// template generates (GenerateSecretString) with their versions, and resolving the template's dynamic
// references to them as CloudFormation would at deploy time.
import { randomBytes, randomUUID } from 'node:crypto';

interface SecretVersion {
  id: string;
  value: string;
  stages: string[];
  created: number;
}

export interface FakeSecretsManager {
  /** The ARNs of the secrets it holds. */
  readonly arns: string[];
  /** A new version becomes AWSCURRENT (the old one AWSPREVIOUS), as `put-secret-value` does; its id. */
  put(arn: string, value: string): string;
  /** The AWSCURRENT value. */
  current(arn: string): string;
  /** Every GetSecretValue served, in order (what the functions read, and how often). */
  readonly reads: string[];
  handle(operation: string, body: unknown): { status: number; body: unknown };
  /** `{{resolve:secretsmanager:<arn>:SecretString:<json key>:<stage>:<version id>}}` in `text`, resolved. */
  resolveReferences(text: string): string;
}

/** What GenerateSecretString makes of a template: the JSON with a random value at the generated key. */
export function generateSecretString(spec: {
  SecretStringTemplate?: string;
  GenerateStringKey?: string;
  PasswordLength?: number;
}): string {
  const length = spec.PasswordLength ?? 32;
  // Letters and digits only (ExcludePunctuation), like the real generator with that option.
  const value = randomBytes(length * 2)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, length);
  if (!spec.GenerateStringKey) return value;
  const template = JSON.parse(spec.SecretStringTemplate ?? '{}') as Record<string, unknown>;
  return JSON.stringify({ ...template, [spec.GenerateStringKey]: value });
}

const error = (status: number, type: string, message: string) => ({
  status,
  body: { __type: type, message, Message: message },
});

export function createFakeSecretsManager(initial: Record<string, string>): FakeSecretsManager {
  const secrets = new Map<string, SecretVersion[]>();
  const reads: string[] = [];
  const put = (arn: string, value: string): string => {
    const versions = secrets.get(arn) ?? [];
    for (const version of versions) {
      version.stages = version.stages.includes('AWSCURRENT') ? ['AWSPREVIOUS'] : [];
    }
    const id = randomUUID();
    versions.push({ id, value, stages: ['AWSCURRENT'], created: Date.now() });
    secrets.set(arn, versions);
    return id;
  };
  for (const [arn, value] of Object.entries(initial)) put(arn, value);

  const find = (secretId: string): [string, SecretVersion[]] | undefined => {
    for (const [arn, versions] of secrets) {
      // By ARN, or by name (the ARN's resource part without the random suffix).
      const name = arn.slice(arn.indexOf(':secret:') + ':secret:'.length).replace(/-[A-Za-z0-9]{6}$/, '');
      if (secretId === arn || secretId === name) return [arn, versions];
    }
    return undefined;
  };
  const versionOf = (versions: SecretVersion[], versionId?: string, stage?: string) =>
    versionId
      ? versions.find((version) => version.id === versionId)
      : versions.find((version) => version.stages.includes(stage || 'AWSCURRENT'));

  return {
    get arns() {
      return [...secrets.keys()];
    },
    reads,
    put,
    current(arn) {
      const found = find(arn);
      const version = found && versionOf(found[1]);
      if (!version) throw new Error(`no secret ${arn}`);
      return version.value;
    },
    handle(operation, body) {
      if (operation !== 'GetSecretValue')
        return error(400, 'InvalidRequestException', `${operation} is not served by this fake`);
      const request = (body ?? {}) as { SecretId?: unknown; VersionId?: unknown; VersionStage?: unknown };
      const secretId = typeof request.SecretId === 'string' ? request.SecretId : '';
      const found = find(secretId);
      if (!found)
        return error(400, 'ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
      const [arn, versions] = found;
      const version = versionOf(
        versions,
        typeof request.VersionId === 'string' ? request.VersionId : undefined,
        typeof request.VersionStage === 'string' ? request.VersionStage : undefined,
      );
      if (!version)
        return error(
          400,
          'ResourceNotFoundException',
          "Secrets Manager can't find the specified secret value for VersionId or VersionStage.",
        );
      reads.push(arn);
      return {
        status: 200,
        body: {
          ARN: arn,
          Name: arn.slice(arn.indexOf(':secret:') + ':secret:'.length),
          SecretString: version.value,
          VersionId: version.id,
          VersionStages: version.stages,
          CreatedDate: version.created / 1000,
        },
      };
    },
    resolveReferences(text) {
      return text.replace(
        /\{\{resolve:secretsmanager:(arn:[^:]+:secretsmanager:[^:]+:\d+:secret:[^:}]+|[^:}]+):SecretString:([^:}]*):([^:}]*):([^:}]*)\}\}/g,
        (_whole, secretId: string, jsonKey: string, stage: string, versionId: string) => {
          const found = find(secretId);
          const version = found && versionOf(found[1], versionId || undefined, stage || undefined);
          if (!version) throw new Error(`dynamic reference to a missing secret version: ${secretId}`);
          if (!jsonKey) return version.value;
          const value = (JSON.parse(version.value) as Record<string, unknown>)[jsonKey];
          if (typeof value !== 'string') throw new Error(`secret ${secretId} has no string at ${jsonKey}`);
          return value;
        },
      );
    },
  };
}
