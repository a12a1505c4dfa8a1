// The group's table (need `table`).
import { dynamoClient } from '../aws/dynamodb.ts';
import { Table } from '../db/repository.ts';
import { type GroupResources, once } from './resources.ts';

export function tableOf(resources: GroupResources): Table {
  const { settings, clock } = resources;
  return once(resources, 'table', () => new Table(dynamoClient(settings.aws), settings.table_name, clock));
}
