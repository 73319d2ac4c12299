import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Store, TokenRecord } from '../../src/store/types.js'
import { openFresh, storeKinds } from '../helpers/stores.js'

const token = (id: string, createdBy: TokenRecord['createdBy'] = null): TokenRecord => ({
  id,
  name: id,
  secretHash: `h-${id}`,
  scopes: ['tokens:write'],
  createdAt: new Date(),
  expiresAt: null,
  lastUsedAt: null,
  revokedAt: null,
  previousSecretHash: null,
  previousSecretExpiresAt: null,
  rateLimit: null,
  createdBy,
})

describe.each(storeKinds)('token revocation on $name', (kind) => {
  let store: Store
  beforeEach(async () => {
    store = (await openFresh(kind)).store
  })
  afterEach(() => store.close())

  it('revokes what a token made with it, and what they made, but not its maker', async () => {
    await store.tokens.insert(token('maker'))
    await store.tokens.insert(token('child', { tokenId: 'maker' }))
    await store.tokens.insert(token('grandchild', { tokenId: 'child' }))
    expect(await store.tokens.revoke('child', new Date())).toBe('revoked')
    expect((await store.tokens.find('grandchild'))?.revokedAt).toBeInstanceOf(Date)
    expect((await store.tokens.find('maker'))?.revokedAt).toBeNull()
  })

  it('revokes, when asked again, a token made by one revoked already, and says it was revoked before', async () => {
    // A token made while its maker's revocation was committing: the maker is revoked, the token not.
    await store.tokens.insert(token('maker'))
    const first = new Date(Date.now() - 1000)
    expect(await store.tokens.revoke('maker', first)).toBe('revoked')
    await store.tokens.insert(token('late', { tokenId: 'maker' }))
    expect((await store.tokens.find('late'))?.revokedAt).toBeNull()
    const epoch = store.tokens.revocationEpoch()
    expect(await store.tokens.revoke('maker', new Date())).toBe('already-revoked')
    expect((await store.tokens.find('late'))?.revokedAt).toBeInstanceOf(Date)
    // The maker keeps the time of its own revocation; the epoch moves, so caches drop the late one.
    expect((await store.tokens.find('maker'))?.revokedAt?.getTime()).toBe(first.getTime())
    expect(store.tokens.revocationEpoch()).not.toBe(epoch)
    expect(await store.tokens.revoke('maker', new Date())).toBe('already-revoked')
  })
})
