// Fixed credentials for the local stand-ins, which check only that an access key id is one they know.
export function localCredentials(service: 'dynamodb' | 's3' | 'ses') {
  // s3rver accepts exactly this pair; DynamoDB Local and the SES stand-in accept any.
  return service === 's3'
    ? { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }
    : { accessKeyId: 'local', secretAccessKey: 'local' };
}
