import './tokens.css'
import { useEffect, useRef, useState } from 'preact/hooks'
import { nextPageQuery } from '../../client/link.js'
import { must, type Schemas } from '../api.js'
import { useSession } from '../session.js'
import { ConfirmButton, ErrorNote, Page, StatusNote, TableRegion, Time, useLoad } from '../ui.js'
import { IssueForm } from './tokens-issue.js'
import { RollDialog } from './tokens-roll.js'
import { SecretBox, type Shown } from './tokens-secret.js'

type Token = Schemas['Token']

const STATUS_WORDS: Record<Token['status'], string> = {
  active: 'Active',
  expired: 'Expired',
  revoked: 'Revoked',
}

/** Tokens: the list (paged, oldest first), issue, roll and revoke. Shown only to a `tokens:manage` token. */
export function TokensPage() {
  const { api } = useSession()
  // The `after` cursor of each page visited: the last is the page shown, none the first page.
  const [cursors, setCursors] = useState<string[]>([])
  const after = cursors[cursors.length - 1]
  const list = useLoad(
    async (signal) => {
      const { data, response } = await must(
        api.GET('/tokens', { params: { query: after === undefined ? {} : { after } }, signal }),
      )
      return { tokens: data.data, next: nextPageQuery(response)?.get('after') ?? undefined }
    },
    [after],
  )
  const [shown, setShown] = useState<Shown>()
  const [rolling, setRolling] = useState<Token>()
  const [status, setStatus] = useState<string>()

  // A revoked token's row loses its buttons: the focus goes to the list's heading rather than nowhere.
  const listHeading = useRef<HTMLHeadingElement>(null)
  const focusList = useRef(false)
  useEffect(() => {
    if (focusList.current && list.data) {
      focusList.current = false
      listHeading.current?.focus()
    }
  }, [list.data])
  const revoke = async (token: Token) => {
    await must(api.DELETE('/tokens/{id}', { params: { path: { id: token.id } } }))
    setStatus(`Revoked “${token.name}”: its secrets no longer work.`)
    focusList.current = true
    list.reload()
  }

  return (
    <Page title="Tokens">
      {shown ? (
        <SecretBox
          shown={shown}
          onDismiss={() => {
            // The box and its focused button go: the focus moves on to the list rather than nowhere.
            setShown(undefined)
            listHeading.current?.focus()
          }}
        />
      ) : null}
      <IssueForm
        onIssued={(token) => {
          setStatus(undefined)
          setShown({ kind: 'issued', token })
          list.reload()
        }}
      />
      <h2 id="tokens-list" tabIndex={-1} ref={listHeading}>
        All tokens
      </h2>
      <p class="hint">Oldest first; revoked and expired ones too. Secrets are never shown here.</p>
      <StatusNote text={status} />
      <ErrorNote error={list.error} />
      {list.data ? (
        <TableRegion label="Token list">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Public id</th>
              <th scope="col">Scopes</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Issued by</th>
              <th scope="col">Rate limit</th>
              <th scope="col">Old secret works until</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.data.tokens.length === 0 ? (
              <tr>
                <td colSpan={11}>No tokens.</td>
              </tr>
            ) : (
              list.data.tokens.map((token) => (
                <TokenRow
                  key={token.id}
                  token={token}
                  onRoll={() => setRolling(token)}
                  onRevoke={() => revoke(token)}
                />
              ))
            )}
          </tbody>
        </TableRegion>
      ) : list.loading ? (
        <p class="loading">Loading tokens…</p>
      ) : null}
      <div class="actions">
        {cursors.length > 0 ? (
          <button type="button" onClick={() => setCursors(cursors.slice(0, -1))}>
            Previous page
          </button>
        ) : null}
        {list.data?.next !== undefined ? (
          <button type="button" onClick={() => setCursors([...cursors, list.data?.next as string])}>
            Next page
          </button>
        ) : null}
      </div>
      {rolling ? (
        <RollDialog
          token={rolling}
          onClose={() => setRolling(undefined)}
          onRolled={(token) => {
            setStatus(undefined)
            setShown({ kind: 'rolled', token })
            list.reload()
          }}
        />
      ) : null}
    </Page>
  )
}

function TokenRow({
  token,
  onRoll,
  onRevoke,
}: {
  token: Token
  onRoll: () => void
  onRevoke: () => Promise<void>
}) {
  return (
    <tr>
      <td>{token.name}</td>
      <td>
        <code>{token.prefix}</code>
      </td>
      <td>
        <ul class="token-scopes">
          {token.scopes.map((scope) => (
            <li key={scope}>
              <code>{scope}</code>
            </li>
          ))}
        </ul>
      </td>
      <td>
        <span class={`token-status ${token.status}`}>{STATUS_WORDS[token.status]}</span>
        {token.revokedAt ? (
          <>
            {' '}
            <Time iso={token.revokedAt} />
          </>
        ) : null}
      </td>
      <td>
        <Time iso={token.createdAt} />
      </td>
      <td>{token.expiresAt ? <Time iso={token.expiresAt} /> : 'Never'}</td>
      <td>{token.lastUsedAt ? <Time iso={token.lastUsedAt} /> : 'Never'}</td>
      <td>
        <IssuedBy by={token.createdBy} />
      </td>
      <td>{token.rateLimit ?? 'Service-wide'}</td>
      <td>{token.previousSecretExpiresAt ? <Time iso={token.previousSecretExpiresAt} /> : 'No overlap'}</td>
      <td>
        <div class="row-actions">
          {token.status === 'active' ? (
            <button type="button" onClick={onRoll}>
              Roll
            </button>
          ) : null}
          {token.status !== 'revoked' ? (
            <ConfirmButton
              label="Revoke"
              question={`Revoke the token “${token.name}” (${token.prefix})? Every secret of it stops working at once, and so do the tokens it issued.`}
              confirm="Revoke token"
              onConfirm={onRevoke}
            />
          ) : null}
        </div>
      </td>
    </tr>
  )
}

/** Who issued a token: another token (this one, maybe), a JWT, or the command line on the database host. */
function IssuedBy({ by }: { by: Token['createdBy'] }) {
  const { caller } = useSession()
  if (by === null) return <>Command line</>
  if ('tokenId' in by) {
    const mine = 'tokenId' in caller.actor && caller.actor.tokenId === by.tokenId
    return (
      <>
        Token <code>pst_{by.tokenId}_</code>
        {mine ? ' (yours)' : ''}
      </>
    )
  }
  return (
    <>
      JWT <code>{by.sub}</code> of <code>{by.iss}</code>
    </>
  )
}
