import type { QueryResultRow } from 'pg'

export declare function resolveTestPostgresUrl(): Promise<string | undefined>
export declare function freshSchemaName(prefix?: string): string
export declare function queryOnce<Row extends QueryResultRow = QueryResultRow>(
  url: string,
  text: string,
  values?: unknown[],
): Promise<Row[]>
export declare function dropSchema(url: string, schema: string): Promise<void>
