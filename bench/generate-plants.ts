// Writes N plants as JSON Lines to stdout, for measuring `plantstore import`:
//   npx tsx bench/generate-plants.ts 1000000 > /tmp/plants.jsonl
import { once } from 'node:events'

const count = Number(process.argv[2] ?? 1_000_000)
const tags = ['aroid', 'fern', 'succulent', 'palm', 'herb']
let chunk = ''
for (let i = 1; i <= count; i++) {
  const id = 9_007_199_254_740_000n + BigInt(i)
  chunk +=
    i % 3 === 0
      ? `{"id":${id},"name":"plant ${i}"}\n`
      : `{"id":${id},"name":"plant ${i}","tag":"${tags[i % 5]}"}\n`
  if (chunk.length > 1 << 16) {
    if (!process.stdout.write(chunk)) await once(process.stdout, 'drain')
    chunk = ''
  }
}
process.stdout.write(chunk)
