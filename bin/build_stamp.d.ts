/** Types of build_stamp.js (plain JavaScript so that bin/start.js needs no TypeScript loader). */
export declare const COMPILED: string[]
export declare const COPIED: string[]
export declare const STAMP: string
export interface BuildStamp {
  fingerprint: string
  /** The checkout, relative to the build (a URL path ending in `/`). */
  checkout: string
  builtAt: string
  seconds: number
}
export declare function isTestOrModules(relativePath: string): boolean
export declare function listFiles(
  root: string,
  entries: string[],
  skip?: (relativePath: string) => boolean
): string[]
export declare function sourceFingerprint(root: string): string
export declare function readStamp(outDir: string): BuildStamp | null
export declare function buildIsFresh(root: string, outDir: string): boolean
