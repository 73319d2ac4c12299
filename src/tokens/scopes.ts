export const SCOPES = [
  'plants:read',
  'plants:write',
  'webhooks:manage',
  'metrics:read',
  'tokens:manage',
  'events:read',
] as const
export type Scope = (typeof SCOPES)[number]

export const DEFAULT_SCOPES: readonly Scope[] = ['plants:read', 'plants:write']
