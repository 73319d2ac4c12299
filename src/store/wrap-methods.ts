import type { Store } from './types.js'

type Method = (...args: unknown[]) => unknown

/**
 * `target` with each of its methods replaced by what `wrap` makes of it (timing, tracing), made once
 * per method on first use and again if the method was replaced since (a test's spy, say), so that a
 * call allocates nothing. Methods named in `skip`, and everything that is not a method, are as they
 * are.
 */
export function wrapMethods<T extends object>(
  target: T,
  wrap: (method: Method, name: string) => Method,
  skip: ReadonlySet<string> = new Set(),
): T {
  const wrappers = new Map<string, { method: unknown; wrapper: Method }>()
  return new Proxy(target, {
    get(object, property, receiver) {
      const value = Reflect.get(object, property, receiver)
      if (typeof value !== 'function' || typeof property !== 'string' || skip.has(property)) return value
      let entry = wrappers.get(property)
      if (entry?.method !== value) {
        entry = { method: value, wrapper: wrap(value as Method, property) }
        wrappers.set(property, entry)
      }
      return entry.wrapper
    },
  })
}

/** The store with the parts given in place of its own; its other members as they are. */
export function withParts(store: Store, parts: Partial<Record<keyof Store, object>>): Store {
  return new Proxy(store, {
    get(object, property, receiver) {
      if (typeof property === 'string' && property in parts) return parts[property as keyof Store]
      const value = Reflect.get(object, property, receiver)
      return typeof value === 'function' ? value.bind(object) : value
    },
  })
}
