export declare function resolveTestPostgresUrl(): Promise<string | undefined>
