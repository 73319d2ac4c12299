import type { Options } from 'ajv'

/** The module of validators scripts/shape-validators.mjs generates for these shapes. */
export declare function validatorsModule(
  shapes: readonly object[],
  setup: { AJV_OPTIONS: Options; forValues: (schema: unknown, fromText: boolean) => unknown },
): string

export declare const MODULES: readonly { file: string; schemas: string; shapes: readonly string[] }[]
