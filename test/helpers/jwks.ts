import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose'

export type SigningAlg = 'RS256' | 'ES256' | 'EdDSA'

/** A signing key of an identity provider under test: its private half and its public JWK. */
export interface SigningKey {
  alg: SigningAlg
  kid: string
  privateKey: CryptoKey
  jwk: JWK
}

export async function signingKey(alg: SigningAlg, kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519' } : {})
  return { alg, kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } }
}

export const ISSUER = 'https://id.example.test/realms/plants'
export const AUDIENCE = 'plantstore'

/** A JWT signed by `key`: by default from ISSUER for AUDIENCE, subject alice, valid for 5 minutes. */
export async function signJwt(
  key: SigningKey,
  claims: JWTPayload = {},
  options: { kid?: string | undefined; expiresIn?: string } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  const body = { iss: ISSUER, aud: AUDIENCE, sub: 'alice', iat: now, exp: now + 300, ...claims }
  const kid = 'kid' in options ? options.kid : key.kid
  return new SignJWT(body)
    .setProtectedHeader(kid === undefined ? { alg: key.alg } : { alg: key.alg, kid })
    .sign(key.privateKey)
}

/** A compact JWT of the given header and payload, with the given signature (no key involved). */
export function handBuiltJwt(header: object, payload: object, signature = ''): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part(header)}.${part(payload)}.${signature}`
}

/**
 * A JSON Web Key Set served on 127.0.0.1 by node:http, as an identity provider publishes one. Keys
 * can be added while it runs, and it can be taken down; `fetches` counts the requests it answered.
 */
export interface JwksServer {
  url: string
  keys: JWK[]
  readonly fetches: number
  /** While true, every connection is dropped without an answer, as by a provider that is down. */
  down: boolean
  /**
   * While set, every request is counted and answered with this status and a body quoting the
   * request's headers, as by a failing provider that echoes what it was sent.
   */
  failWith: number | undefined
  close(): Promise<void>
}

export async function serveJwks(keys: SigningKey[]): Promise<JwksServer> {
  const published = keys.map((key) => key.jwk)
  let fetches = 0
  const state: { down: boolean; failWith: number | undefined } = { down: false, failWith: undefined }
  const server: Server = createServer((request, response) => {
    if (state.down) {
      request.socket.destroy()
      return
    }
    fetches++
    if (state.failWith !== undefined) {
      response.writeHead(state.failWith, { 'content-type': 'text/plain' })
      response.end(`provider failed; you sent ${JSON.stringify(request.headers)}`)
      return
    }
    if (request.url !== '/jwks.json') {
      response.writeHead(404).end()
      return
    }
    response
      .writeHead(200, { 'content-type': 'application/jwk-set+json' })
      .end(JSON.stringify({ keys: published }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/jwks.json`,
    keys: published,
    get fetches() {
      return fetches
    },
    get down() {
      return state.down
    },
    set down(value) {
      state.down = value
    },
    get failWith() {
      return state.failWith
    },
    set failWith(value) {
      state.failWith = value
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}
