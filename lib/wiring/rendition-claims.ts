// The table as the render function reaches it (need `renditionClaims`): its renditions' claims only, which
// its grant holds it to (infra/service-function.ts).
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { Table } from '#lib/platform/db/table.ts';
import { type GroupResources, once } from './resources.ts';

export function claimsTableOf(resources: GroupResources): Table {
  const { settings, clock } = resources;
  return once(
    resources,
    'renditionClaims',
    () => new Table(dynamoClient(settings.aws), settings.table_name, clock),
  );
}
