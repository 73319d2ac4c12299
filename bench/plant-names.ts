// The plants the benchmark stores through `plantstore import`: names as a nursery's catalogue has
// them, a common name and often a cultivar, and tags from a small set. Made from the plant's number
// alone, so that the same count always gives the same plants.

/** Common names; two of the forty hold "fern", so a search for it keeps one plant in twenty. */
const COMMON = [
  'Monstera deliciosa',
  'Ficus lyrata',
  'Boston fern',
  'Snake plant',
  'Golden pothos',
  'Peace lily',
  'ZZ plant',
  'Spider plant',
  'Rubber plant',
  'Aloe vera',
  'Jade plant',
  'Calathea orbifolia',
  'String of pearls',
  'Bird of paradise',
  'Philodendron scandens',
  'Chinese evergreen',
  'Dracaena marginata',
  'Parlor palm',
  'Kentia palm',
  'Areca palm',
  'Echeveria elegans',
  'Haworthia fasciata',
  'Christmas cactus',
  'Moth orchid',
  'Anthurium andraeanum',
  'Staghorn fern',
  'Prayer plant',
  'Peperomia obtusifolia',
  'Hoya carnosa',
  'Ölbaum',
  'Sweet basil',
  'Rosemary',
  'English lavender',
  'Tillandsia ionantha',
  'Guzmania lingulata',
  'Alocasia zebrina',
  'Begonia rex',
  'Cast iron plant',
  'Croton',
  'Yucca elephantipes',
]

const CULTIVARS = ['', 'Variegata', 'Compacta', 'Aurea', 'Nana', 'Marble Queen', 'Silver Cloud']

/** The tags, one on two plants in three. */
export const TAGS = ['aroid', 'fern', 'succulent', 'palm', 'herb', 'cactus', 'orchid', 'bromeliad']

/** The share of the plants whose name holds "fern" (as their names are made below). */
export const FERN_SHARE = COMMON.filter((name) => name.toLowerCase().includes('fern')).length / COMMON.length

/** The n-th plant (from 1) under the given id, as a JSON object's text (a JSON Lines line, a body). */
export function plantJson(id: bigint, n: number): string {
  const cultivar = CULTIVARS[Math.floor(n / COMMON.length) % CULTIVARS.length]
  const name = `${COMMON[n % COMMON.length]}${cultivar ? ` '${cultivar}'` : ''} #${n}`
  return n % 3 === 0
    ? `{"id":${id},"name":${JSON.stringify(name)}}`
    : `{"id":${id},"name":${JSON.stringify(name)},"tag":"${TAGS[Math.floor(n / 3) % TAGS.length]}"}`
}

/** The stored plants' ids ascend across 2^53, past which a double no longer holds every integer. */
const FIRST_ID = 9_007_199_254_740_000n

/** The first `count` plants as JSON Lines, in chunks of about 64 KiB. */
export function* plantLines(count: number): Generator<string> {
  let chunk = ''
  for (let n = 1; n <= count; n++) {
    chunk += `${plantJson(FIRST_ID + BigInt(n), n)}\n`
    if (chunk.length > 1 << 16) {
      yield chunk
      chunk = ''
    }
  }
  if (chunk.length > 0) yield chunk
}
