import './live.css'
import { useEffect, useReducer, useRef, useState } from 'preact/hooks'
import { href } from '../route.js'
import { useSession } from '../session.js'
import { Page, Time } from '../ui.js'
import { type Change, ChangeFollower, type StreamState } from './live-stream.js'

/** How many changes the page keeps: the newest, so that a busy feed never grows the page without end. */
export const KEPT = 200

interface Feed {
  /** Shown, newest first. */
  shown: Change[]
  /** Received while paused, newest first: shown on resume. */
  held: Change[]
  paused: boolean
}

type FeedAction = { kind: 'change'; change: Change } | { kind: 'pause' | 'resume' | 'clear' }

function feed(state: Feed, action: FeedAction): Feed {
  switch (action.kind) {
    case 'change':
      return state.paused
        ? { ...state, held: [action.change, ...state.held].slice(0, KEPT) }
        : { ...state, shown: [action.change, ...state.shown].slice(0, KEPT) }
    case 'pause':
      return { ...state, paused: true }
    case 'resume':
      return { shown: [...state.held, ...state.shown].slice(0, KEPT), held: [], paused: false }
    case 'clear':
      return { ...state, shown: [], held: [] }
  }
}

const CONNECTION: Record<StreamState['kind'], string> = {
  connecting: 'Connecting…',
  connected: 'Connected',
  reconnecting: 'Reconnecting…',
  stopped: 'Disconnected',
}

const TYPE: Record<Change['type'], string> = {
  'plant.created': 'Created',
  'plant.updated': 'Updated',
  'plant.deleted': 'Deleted',
}

/** The change feed as it happens: each change to a plant, newest first, from the moment the page opened. */
export function LivePage() {
  const { api } = useSession()
  const [state, dispatch] = useReducer(feed, { shown: [], held: [], paused: false })
  const [connection, setConnection] = useState<StreamState>({ kind: 'connecting' })
  const follower = useRef<ChangeFollower>()
  useEffect(() => {
    const following = new ChangeFollower(api, (change) => dispatch({ kind: 'change', change }), setConnection)
    follower.current = following
    following.start()
    // Leaving the page closes its stream.
    return () => following.stop()
  }, [api])

  const { shown, held, paused } = state
  return (
    <Page title="Live">
      <p class="live-intro">
        Every change to a plant, as it is made, newest first. The last {KEPT} are kept here.
      </p>
      <div class="live-bar">
        <p role="status" aria-label="Connection" class={`live-connection live-${connection.kind}`}>
          <span class="live-dot" aria-hidden="true" />
          <span>{CONNECTION[connection.kind]}</span>
          {connection.kind === 'reconnecting' || connection.kind === 'stopped' ? (
            <span class="live-reason"> {connection.reason}</span>
          ) : connection.kind === 'connected' && connection.note ? (
            <span class="live-reason"> {connection.note}</span>
          ) : null}
        </p>
        <div class="actions">
          <button type="button" onClick={() => dispatch({ kind: paused ? 'resume' : 'pause' })}>
            {paused ? 'Resume' : 'Pause'}
          </button>
          <button type="button" onClick={() => dispatch({ kind: 'clear' })}>
            Clear
          </button>
          {connection.kind === 'stopped' && connection.fromNow ? (
            <button type="button" class="primary" onClick={() => follower.current?.start()}>
              Follow from now
            </button>
          ) : null}
        </div>
      </div>
      <p class="status" role="status">
        {paused
          ? `Paused: ${held.length === 1 ? '1 new change is' : `${held.length} new changes are`} held until you resume.`
          : ''}
      </p>
      {shown.length === 0 ? (
        <p class="live-empty">No change shown yet: changes appear here as they are made.</p>
      ) : null}
      <div role="log" aria-label="Changes" class="live-log">
        <ol class="feed live-feed">
          {shown.map((change) => (
            <ChangeItem key={change.cursor} change={change} />
          ))}
        </ol>
      </div>
    </Page>
  )
}

function ChangeItem({ change }: { change: Change }) {
  const plant = change.after ?? change.before
  const renamed =
    change.type === 'plant.updated' &&
    change.before &&
    change.after &&
    change.before.name !== change.after.name
  return (
    <li class={`live-change live-${change.type.replace('plant.', '')}`}>
      <span class="live-type">{TYPE[change.type] ?? change.type}</span>{' '}
      {plant ? (
        <>
          <a href={href('plants', plant.id)}>{plant.name}</a>{' '}
          <span class="live-id">
            id <span class="id">{String(plant.id)}</span>
          </span>
          {renamed ? <span class="live-was"> (was {change.before?.name})</span> : null}
        </>
      ) : (
        <span>a plant no longer on record</span>
      )}
      <span class="live-meta">
        <Time iso={change.time} /> by <Actor actor={change.actor} />
      </span>
    </li>
  )
}

function Actor({ actor }: { actor: Change['actor'] }) {
  if (actor === null) return <span>someone not on record</span>
  if ('tokenId' in actor)
    return (
      <span>
        token <code>{actor.tokenId}</code>
      </span>
    )
  if ('cli' in actor)
    return (
      <span>
        <code>plantstore {actor.cli}</code>
      </span>
    )
  return (
    <span>
      <code>{actor.sub}</code> of <code>{actor.iss}</code>
    </span>
  )
}
