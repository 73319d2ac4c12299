// Opens the SQLite database at argv[2] with the built store (dist/) at the moment argv[3] (ms since
// the epoch), then closes it, and prints `opened` or the error's message: several of these started
// together open one new file at the same instant.
import { openSqlite } from '../../dist/store/sqlite/index.js'

const [path, at] = [process.argv[2], Number(process.argv[3])]
while (Date.now() < at) {
  // A busy wait: a timer would let the processes drift apart by a millisecond or more.
}
try {
  await openSqlite({ path }).close()
  process.stdout.write('opened\n')
} catch (error) {
  process.stdout.write(`${error.message}\n`)
}
