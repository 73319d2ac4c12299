import { describe, expect, it } from 'vitest'
import { type ObservedPart, type Observer, observeStore } from '../../src/store/observed.js'
import type { Store } from '../../src/store/types.js'

const PARTS: ObservedPart[] = ['plants', 'tokens', 'events', 'idempotency', 'maintenance', 'webhooks']

/** A part whose every method resolves with its own name and counts its calls. */
function fakePart(part: string, calls: string[]): object {
  return new Proxy(
    {},
    {
      get: (_target, name) =>
        typeof name === 'string'
          ? (..._args: unknown[]) => {
              calls.push(`${part}.${name}`)
              return Promise.resolve(`${part}.${name}`)
            }
          : undefined,
    },
  )
}

/** The methods an observed part writes out, read off its class. */
function methodsOf(part: object): string[] {
  return Object.getOwnPropertyNames(Object.getPrototypeOf(part)).filter((name) => name !== 'constructor')
}

describe('a store observed call by call', () => {
  it('hands every call of every observed part to the store, and names its operation after the method', async () => {
    const calls: string[] = []
    const seen: string[] = []
    const made: string[] = []
    const observer: Observer = (operation) => {
      made.push(operation)
      return (call) => {
        seen.push(operation)
        return call()
      }
    }
    const store = Object.fromEntries(PARTS.map((part) => [part, fakePart(part, calls)])) as unknown as Store
    const observed = observeStore(store, observer, PARTS)
    let observedCalls = 0
    for (const part of PARTS) {
      const methods = methodsOf(observed[part] as object)
      expect(methods.length).toBeGreaterThan(0)
      for (const method of methods) {
        calls.length = 0
        seen.length = 0
        const result = await (observed[part] as unknown as Record<string, () => unknown>)[method]?.()
        // What the store gave is given back as it was, from one call of the same method.
        expect(result).toBe(`${part}.${method}`)
        expect(calls).toEqual([`${part}.${method}`])
        // An observed call is observed once, under its own operation; a synchronous helper is not.
        if (seen.length > 0) {
          expect(seen).toEqual([`${part}.${method}`])
          observedCalls++
        }
      }
    }
    // Every observer made at the start is used by the method it was made for.
    expect(observedCalls).toBe(made.length)
    expect(new Set(made).size).toBe(made.length)
  })

  it('leaves the parts it is not asked to observe as they are', () => {
    const store = Object.fromEntries(PARTS.map((part) => [part, fakePart(part, [])])) as unknown as Store
    const observed = observeStore(store, () => (call) => call(), ['plants'])
    expect(observed.tokens).toBe(store.tokens)
    expect(observed.webhooks).toBe(store.webhooks)
    expect(observed.plants).not.toBe(store.plants)
  })
})
