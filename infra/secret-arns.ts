// The ARNs of the sign-in providers' client secrets (auth.providers[].secret_id), for the accounts function's
// GetSecretValue: an ARN as given, a name as its ARN with Secrets Manager's 6-character suffix.
import { ArnFormat, type Stack } from 'aws-cdk-lib';

export function providerSecretArns(
  stack: Stack,
  providers: ReadonlyArray<{ secret_id?: string | undefined }>,
) {
  return providers.flatMap(({ secret_id: id }) => {
    if (!id) return [];
    if (id.startsWith('arn:')) return [id];
    return [
      stack.formatArn({
        service: 'secretsmanager',
        resource: 'secret',
        resourceName: `${id}-??????`,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      }),
    ];
  });
}
