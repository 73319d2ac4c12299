import type { ValidateFunction } from 'ajv'

// The Ajv validators of the token shapes (src/tokens/schemas.ts), generated into
// dist/tokens/shape-validators.js by `npm run build` (scripts/shape-validators.mjs): the CLI checks
// its options with them without loading TypeBox or compiling a schema.

export declare const NewToken: ValidateFunction
export declare const TokenRollRequest: ValidateFunction
