type Service =
  | 'dynamodb'
  | 's3'
  | 'ses'
  | 'kms'
  | 'events'
  | 'cloudfront'
  | 'secrets-manager'
  | 'rekognition';

// Fixed credentials for the local stand-ins, which check only that an access key id is one they know.
export function localCredentials(service: Service) {
  // s3rver accepts exactly this pair; DynamoDB Local and the other stand-ins accept any.
  return service === 's3'
    ? { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
    : { accessKeyId: 'local', secretAccessKey: 'local' };
}

/** A client's options: its region and attempts, and where `endpoint` is set (never in AWS), the stand-in's. */
export function clientOptions(
  service: Service,
  region: string,
  endpoint: string | undefined,
  maxAttempts = 3,
) {
  return { region, maxAttempts, ...(endpoint ? { endpoint, credentials: localCredentials(service) } : {}) };
}

/**
 * One client per distinct settings in this process (a Lambda container has one set), built on first use.
 * Tests that run several groups in one process share them, and inject faults into the same clients.
 */
export function memoByEndpoint<Settings extends object, Client>(
  build: (settings: Settings) => Client,
): (settings: Settings) => Client {
  const clients = new Map<string, Client>();
  return (settings) => {
    const key = JSON.stringify(settings);
    let client = clients.get(key);
    if (!client) {
      client = build(settings);
      clients.set(key, client);
    }
    return client;
  };
}
