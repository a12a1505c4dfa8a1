// The group's table (need `table`).
import { dynamoClient } from '#lib/platform/aws/dynamodb.ts';
import { Table } from '#lib/platform/db/table.ts';
import { type GroupResources, once } from './resources.ts';

export function tableOf(resources: GroupResources): Table {
  const { settings, clock } = resources;
  return once(
    resources,
    'table',
    () => new Table(dynamoClient(settings.aws), settings.table_name, clock, settings.table_indexes),
  );
}
