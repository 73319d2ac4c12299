import type { Database } from 'better-sqlite3'

export const NEW_DELIVERY_ID: string
export const TYPE_MATCHES: string
export const FAN_OUT_RANGE: string

export interface OutboxRow {
  id: string
  type: string
  payload: string
  createdAt: number
}

export interface Outbox {
  /** Stores the event as fanned out at `at`; returns its seq. */
  write(event: OutboxRow, at: number): number
  /** Creates the deliveries of the events with seq in [from, to], in the open transaction; returns how many. */
  fanOut(from: number, to: number): number
}

export function prepareOutbox(db: Database): Outbox
