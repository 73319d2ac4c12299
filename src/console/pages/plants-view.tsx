import { useState } from 'preact/hooks'
import { parseInt64 } from '../../plants/int64.js'
import { ApiError, must } from '../api.js'
import { go, href } from '../route.js'
import { useSession } from '../session.js'
import { ConfirmButton, ErrorNote, NotAllowed, Page, useLoad } from '../ui.js'
import { PlantEdit, type PlantVersion } from './plants-edit.js'
import { PlantFields } from './plants-fields.js'
import { PlantHistory } from './plants-history.js'

/** One plant (`#/plants/<id>`): its fields, its edit form, its delete and its history. */
export function PlantView({ idText, onDeleted }: { idText: string; onDeleted: (status: string) => void }) {
  const { api, can } = useSession()
  // An id that is no int64 is sent as written: the service's 400 says what is wrong with it.
  const id = (parseInt64(idText) ?? idText) as bigint
  const loaded = useLoad<PlantVersion>(
    async (signal) => {
      const { data, response } = await must(api.GET('/plants/{id}', { params: { path: { id } }, signal }))
      return { plant: data, etag: response.headers.get('etag') ?? '' }
    },
    [api, idText],
  )
  // The version shown once this page saved one or took another's: later than the one loaded.
  const [version, setVersion] = useState<PlantVersion>()
  const [changes, setChanges] = useState(0)
  const current = version ?? loaded.data
  const absent = loaded.error instanceof ApiError && loaded.error.status === 404
  const show = (next: PlantVersion) => {
    setVersion(next)
    setChanges((n) => n + 1)
  }

  return (
    <Page title={`Plant ${idText}`}>
      <p>
        <a href={href('plants')}>Back to all plants</a>
      </p>
      <ErrorNote error={loaded.error} />
      {current ? (
        <>
          <PlantFields plant={current.plant} />
          <h2>Edit</h2>
          {can('plants:write') ? (
            <>
              <PlantEdit current={current} onSaved={show} onTheirs={show} />
              <h2>Delete</h2>
              <ConfirmButton
                label="Delete"
                question={`Delete plant ${String(current.plant.id)}, “${current.plant.name}”? This cannot be undone.`}
                onConfirm={async () => {
                  await must(
                    api.DELETE('/plants/{id}', {
                      params: { path: { id: current.plant.id }, header: { 'if-match': current.etag } },
                    }),
                  )
                  onDeleted(`Plant ${String(current.plant.id)} deleted.`)
                  go('plants')
                }}
              />
            </>
          ) : (
            <NotAllowed scope="plants:write" what="change or delete plants" />
          )}
        </>
      ) : loaded.loading ? (
        <p class="loading">Loading…</p>
      ) : null}
      {current || absent ? <PlantHistory key={changes} id={id} /> : null}
    </Page>
  )
}
