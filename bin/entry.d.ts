// Types of bin/entry.js (plain JavaScript, so that bin/onto.js runs without a build or tsx), for
// the TypeScript that imports it: the build script, the bench and the tests.
export declare const BUNDLED_MAIN: string;
export declare const COMPILED_MAIN: string;
export declare const SOURCE_MAIN: string;
export interface EntryChoice {
  /** True for a build (the bundle or dist/), false for the TypeScript source through tsx. */
  compiled: boolean;
  path: string;
  /** Why the builds were passed over, when `compiled` is false. */
  reason?: string;
}
export declare function chooseEntry(root: string): EntryChoice;
