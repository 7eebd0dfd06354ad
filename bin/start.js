/*
| `npm start`: serves Quire's compiled build, with no TypeScript loader in the serving process.
|
| 1. When the sources changed since the build in build/ was made (or there is none), remakes it:
|    bin/build.ts, in a child process (the only step that loads TypeScript).
| 2. Runs `quire:setup` from the build (migrate; on a fresh install, the demo admin).
| 3. Serves the build's bin/server.js in this very process.
|
| `--build-dir=PATH` builds and serves elsewhere (a folder inside the checkout, so that the
| checkout's node_modules resolve); `--build-only` stops after step 1. Plain JavaScript on
| purpose: Node runs it as it is.
*/
import { spawnSync } from 'node:child_process'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { buildIsFresh } from './build_stamp.js'

const root = fileURLToPath(new URL('../', import.meta.url))
const option = process.argv.find((arg) => arg.startsWith('--build-dir='))
const outDir = resolve(root, option ? option.slice('--build-dir='.length) : 'build')

/** Runs node with `args` in the checkout; a failure ends `npm start` with its exit code. */
function node(args) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

if (!buildIsFresh(root, outDir)) {
  node(['--import=ts-node-maintained/register/esm', join(root, 'bin/build.ts'), outDir])
}
if (process.argv.includes('--build-only')) process.exit(0)
node([join(outDir, 'ace.js'), 'quire:setup'])
await import(pathToFileURL(join(outDir, 'bin/server.js')).href)
