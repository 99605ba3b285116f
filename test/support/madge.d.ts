/**
 * The part of madge's API that `test/repository/import-circles.test.ts` uses. madge ships no types, and this
 * subset is smaller than `@types/madge` (written for madge 5) as another dependency.
 */
declare module 'madge' {
  interface MadgeConfig {
    fileExtensions?: string[];
    tsConfig?: string;
    excludeRegExp?: RegExp[];
  }

  interface MadgeResult {
    /** Each circle as the files on it, relative to the base directory, in import order. */
    circular(): string[][];
    /** Every module read and the modules it imports. */
    obj(): Record<string, string[]>;
  }

  export default function madge(path: string | string[], config?: MadgeConfig): Promise<MadgeResult>;
}
