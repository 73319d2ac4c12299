import type { WebhookChanges } from './types.js'

/** The column of the webhooks table each changeable field is kept in; both schemas name them alike. */
export const CHANGE_COLUMNS: Record<keyof WebhookChanges, string> = {
  url: 'url',
  events: 'events',
  description: 'description',
  disabledAt: 'disabled_at',
  disabledReason: 'disabled_reason',
  failingSince: 'failing_since',
  updatedAt: 'updated_at',
}
