import type { Pool } from 'pg'
import type { StreamTicketStore } from '../types.js'
import { guarded } from './errors.js'

/** The key stream tickets are signed with: one row, written by the first instance that needs it. */
export class PostgresStreamTicketStore implements StreamTicketStore {
  constructor(private readonly pool: Pool) {}

  async key(candidate: Buffer): Promise<Buffer> {
    // Two statements: an instance that loses the race waits for the winner's commit in the first,
    // and the second, with a snapshot of its own, reads the winner's key.
    await guarded(() =>
      this.pool.query(
        'INSERT INTO stream_ticket_key (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING',
        [candidate],
      ),
    )
    const result = await guarded(() =>
      this.pool.query<{ secret: Buffer }>('SELECT secret FROM stream_ticket_key WHERE id = 1'),
    )
    return (result.rows[0] as { secret: Buffer }).secret
  }
}
