// Bundles the console (src/console) into dist/console: its page, one script and one stylesheet, which
// the service serves at /console (src/http/routes/console.ts). The stylesheets the code imports become
// console.css. Everything it needs is in the bundle:
// no CDN, nothing fetched at run time but the API.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs'
import { build } from 'esbuild'

const out = 'dist/console'
rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
await build({
  entryPoints: { console: 'src/console/main.tsx' },
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'eof',
  outdir: out,
  logLevel: 'warning',
})
copyFileSync('src/console/index.html', `${out}/index.html`)
