import type { WebhookRecord } from '../../src/store/types.js'

/** A subscription stored directly, for tests of what the store and metrics do with its deliveries. */
export function subscriptionRecord(id: string, createdAt: Date, events = ['plant.created']): WebhookRecord {
  return {
    id,
    url: 'https://receiver.example/hook',
    events,
    description: null,
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    previousSecret: null,
    previousSecretExpiresAt: null,
    disabledAt: null,
    disabledReason: null,
    failingSince: null,
    createdAt,
    updatedAt: createdAt,
  }
}
