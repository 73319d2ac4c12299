import { measureText } from './plants/validate.js'
import { isRfc3339 } from './rfc3339.js'

// The formats Ajv checks a published schema's strings with: the one set used both by the checks
// compiled as the service starts (src/schema-check.ts) and by the validators generated at build time
// for the CLI (scripts/shape-validators.mjs), which import it by name, so it loads no Ajv.
export const SHAPE_FORMATS = {
  // C0 control characters and lone surrogates: the published pattern says the first; a lone
  // surrogate has no portable pattern (and no UTF-8 encoding, so no store could keep it).
  text: (value: string) => measureText(value) !== -1,
  'date-time': isRfc3339,
  // Annotations of response shapes; request integers are checked by the `int64` and `integerText`
  // keywords.
  int32: true,
  int64: true,
} as const
