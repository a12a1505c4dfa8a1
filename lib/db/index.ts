// The service table of this container, built once from configuration.
import { dynamoClient } from '../aws/dynamodb.ts';
import { config } from '../config/index.ts';
import { Table } from './repository.ts';

let table: Table | undefined;

export function serviceTable(): Table {
  table ??= new Table(dynamoClient(), config.table_name);
  return table;
}
