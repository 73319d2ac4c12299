import SerializerSelector from '@fastify/fast-json-stringify-compiler'

/**
 * Fastify's own serializer compiler (fast-json-stringify), building each distinct response shape
 * once per app. Every operation documents its error responses with the Error shape, each under a
 * description and headers of its own; neither changes what is written, so sharing one serializer per
 * shape spares a start most of its code generation.
 */
export const shapeSharingSerializers: SerializerSelector.SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options)
  const built = new Map<string, SerializerSelector.Serializer>()
  return (route) => {
    // Documentation only: fast-json-stringify writes the same for any description or headers.
    const { description: _description, headers: _headers, ...shape } = route.schema as Record<string, unknown>
    const key = JSON.stringify(shape)
    let serializer = built.get(key)
    if (serializer === undefined) {
      serializer = compile(route)
      built.set(key, serializer)
    }
    return serializer
  }
}
