import { AppError, errors } from '../errors.js'
import type { PlantStore } from '../store/types.js'
import { plantEvent } from './events.js'
import type { NewPlant, Plant } from './model.js'

export async function createPlant(store: PlantStore, plant: NewPlant): Promise<Plant> {
  const outcome = await store.create(plant, { event: plantEvent('plant.created', plant) })
  if (outcome === 'exists')
    throw new AppError(errors.PLANT_EXISTS, `A plant with id ${plant.id} already exists.`)
  return plant
}

export async function getPlant(store: PlantStore, id: bigint): Promise<Plant> {
  const plant = await store.get(id)
  if (!plant) throw new AppError(errors.PLANT_NOT_FOUND, `No plant has id ${id}.`)
  return plant
}
