// Fixed credentials for the local stand-ins, which check only that an access key id is one they know.
export function localCredentials(service: 'dynamodb' | 's3' | 'ses' | 'kms' | 'events' | 'cloudfront') {
  // s3rver accepts exactly this pair; DynamoDB Local and the other stand-ins accept any.
  return service === 's3'
    ? { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
    : { accessKeyId: 'local', secretAccessKey: 'local' };
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
