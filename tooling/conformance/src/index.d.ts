export declare const ADCP_STABLE_VERSION: '3.1.19'
export declare const ADCP_BETA_VERSION: '3.2.0-beta.5'
export declare const conformanceRoot: string
export declare function conformancePath(...segments: string[]): string
// Parsed JSON of any shape; callers narrow it, as the JSDoc `@returns {any}` of index.js says.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export declare function readConformanceJson(...segments: string[]): any
export declare function listConformanceFiles(folder: string, filter?: (file: string) => boolean): string[]
export declare function verifyManifest(): {
  checked: number
  changed: string[]
  missing: string[]
  unlisted: string[]
}
