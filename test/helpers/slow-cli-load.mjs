// Loaded with `node --import`: holds the loading of the built CLI (dist/cli/main.js) for two seconds
// and says so on stderr first, so that a test can send a signal while the modules are still loading.
import { register } from 'node:module'

register(
  `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, nextResolve) {
  if (specifier.endsWith('dist/cli/main.js')) {
    process.stderr.write('cli loading held\\n')
    await new Promise((done) => setTimeout(done, 2000))
  }
  return nextResolve(specifier, context)
}`)}`,
)
