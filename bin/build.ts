/*
| Builds the compiled server `npm start` serves: `node --import=ts-node-maintained/register/esm
| bin/build.ts [OUT_DIR]` (default build/). bin/start.js runs it when the sources changed since
| the last build (build_stamp.js).
|
| Each TypeScript file is transpiled by swc with the options ts-node gives it under `node ace
| serve` and the tests (tsconfig: ESNext modules, legacy decorators with their metadata), so the
| build runs the very code development runs; type checking stays with `npm run typecheck`. A
| whole build takes seconds where `tsc` (or `node ace build`, which runs it) takes a minute.
|
| The build is made in a sibling folder and swapped in whole, its stamp written last: an
| interrupted build never passes for a finished one.
*/
import { copyFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { transformFile, type Options } from '@swc/core'
import { ensureConsoleBuilt } from '#admin/build'
import {
  COMPILED,
  COPIED,
  STAMP,
  isTestOrModules,
  listFiles,
  sourceFingerprint,
  type BuildStamp,
} from './build_stamp.js'

/** ts-node's swc options for this tsconfig (ts-node-maintained/dist/transpilers/swc.js). */
const SWC_OPTIONS: Options = {
  swcrc: false,
  sourceMaps: false,
  module: { type: 'es6' },
  jsc: {
    parser: {
      syntax: 'typescript',
      tsx: false,
      decorators: true,
      dynamicImport: true,
    },
    target: 'esnext',
    transform: { decoratorMetadata: true, legacyDecorator: true, useDefineForClassFields: true },
    keepClassNames: true,
    experimental: { keepImportAttributes: true, emitAssertForImportAttributes: false },
  },
}

/** The console's pages: bundled by vite (public/assets), not run by the server. */
const skipInServer = (path: string) =>
  isTestOrModules(path) || /^plugins\/[^/]+\/admin\/pages$/.test(path)

/** Files of the compiled folders that are not copied: sources of other tools, type stubs. */
const notCopied = (path: string) => /\.(tsx|js|d\.ts)$/.test(path)

/** ace for the build: the compiled console entry point, without a TypeScript loader. */
const ACE = `/* Ace in the compiled build (bin/build.ts): no TypeScript loader. */
await import('./bin/console.js')
`

async function writeInto(outDir: string, path: string, contents: string | Buffer) {
  await mkdir(dirname(join(outDir, path)), { recursive: true })
  await writeFile(join(outDir, path), contents)
}

async function copyInto(root: string, outDir: string, path: string) {
  await mkdir(dirname(join(outDir, path)), { recursive: true })
  await copyFile(join(root, path), join(outDir, path))
}

/** A package.json for the build: ESM, and the `#alias/*` imports map (its paths are the same). */
async function buildPackageJson(root: string) {
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'))
  const { name, version, type, imports } = pkg
  return JSON.stringify({ name, version, private: true, type, imports }, null, 2) + '\n'
}

/**
 * Makes the build of the checkout `root` in `outDir`: the console's bundle first when it is
 * stale (it is copied in), then the server. Answers the build's stamp.
 */
export async function buildServer(root: string, outDir: string): Promise<BuildStamp> {
  const started = performance.now()
  await ensureConsoleBuilt(root)
  // Taken before reading any source: a file edited during the build makes the next start rebuild.
  const fingerprint = sourceFingerprint(root)

  const partial = join(dirname(outDir), `${basename(outDir)}.partial-${process.pid}`)
  await rm(partial, { recursive: true, force: true })
  const work: Promise<unknown>[] = []
  for (const path of listFiles(root, COMPILED, skipInServer)) {
    if (path.endsWith('.ts') && !path.endsWith('.d.ts')) {
      work.push(
        transformFile(join(root, path), SWC_OPTIONS).then(({ code }) =>
          writeInto(partial, path.replace(/\.ts$/, '.js'), code)
        )
      )
    } else if (!notCopied(path)) {
      work.push(copyInto(root, partial, path))
    }
  }
  for (const path of listFiles(root, COPIED)) work.push(copyInto(root, partial, path))
  work.push(writeInto(partial, 'ace.js', ACE))
  work.push(buildPackageJson(root).then((json) => writeInto(partial, 'package.json', json)))
  await Promise.all(work)

  const stamp: BuildStamp = {
    fingerprint,
    checkout: `${relative(outDir, root).split('\\').join('/')}/`,
    builtAt: new Date().toISOString(),
    seconds: Math.round(performance.now() - started) / 1000,
  }
  await writeInto(partial, STAMP, JSON.stringify(stamp, null, 2) + '\n')
  await rm(outDir, { recursive: true, force: true })
  await rename(partial, outDir)
  return stamp
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('../', import.meta.url))
  const outDir = resolve(root, process.argv[2] ?? 'build')
  console.log(`Building the server into ${relative(root, outDir) || '.'}/ (sources changed)`)
  const stamp = await buildServer(root, outDir)
  console.log(`Built in ${stamp.seconds} s`)
}
