import type { Schemas } from '../api.js'

/** A plant's fields, its id digit for digit. */
export function PlantFields({ plant }: { plant: Schemas['StoredPlant'] }) {
  return (
    <dl class="plant-fields">
      <dt>Id</dt>
      <dd class="id">{String(plant.id)}</dd>
      <dt>Name</dt>
      <dd>{plant.name}</dd>
      <dt>Tag</dt>
      <dd>{plant.tag ?? 'none'}</dd>
    </dl>
  )
}
