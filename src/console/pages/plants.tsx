import './plants.css'
import { useState } from 'preact/hooks'
import { useRoute } from '../route.js'
import { PlantList, type PlantSearch } from './plants-list.js'
import { PlantView } from './plants-view.js'

/**
 * The plants: the list (`#/plants`) and one plant (`#/plants/<id>`). What the list was showing, and
 * the last thing done, outlive a visit to a plant, so "back to the list" finds it as it was.
 */
export function PlantsPage() {
  const route = useRoute()
  const [search, setSearch] = useState<PlantSearch>({ q: '', tags: '', sort: 'id', limit: 25 })
  const [cursors, setCursors] = useState<string[]>([])
  const [status, setStatus] = useState<string>()
  const id = route[0] === 'plants' ? route[1] : undefined
  if (id !== undefined) return <PlantView key={id} idText={id} onDeleted={setStatus} />
  return (
    <PlantList
      search={search}
      cursors={cursors}
      status={status}
      onSearch={(next) => {
        setSearch(next)
        setCursors([])
        setStatus(undefined)
      }}
      onPage={setCursors}
    />
  )
}
