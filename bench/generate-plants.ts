// Writes N plants as JSON Lines to stdout, for measuring `plantstore import`:
//   npx tsx bench/generate-plants.ts 1000000 > /tmp/plants.jsonl
import { once } from 'node:events'
import { plantLines } from './plant-names.js'

const count = Number(process.argv[2] ?? 1_000_000)
for (const chunk of plantLines(count)) {
  if (!process.stdout.write(chunk)) await once(process.stdout, 'drain')
}
