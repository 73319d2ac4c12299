import type { ValidateFunction } from 'ajv'

// The Ajv validator of the plant shape NewPlant (src/http/schemas.ts), generated into
// dist/plants/shape-validators.js by `npm run build` (scripts/shape-validators.mjs): the CLI checks
// an imported line with it without loading TypeBox or compiling a schema.

export declare const NewPlant: ValidateFunction
