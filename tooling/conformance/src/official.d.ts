/** The official verdict on `value` for the schema file (e.g. `core/format.json`): the error list, empty when valid. */
export declare function officialErrors(file: string, value: unknown): string[]
