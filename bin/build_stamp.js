/*
| What the compiled build (`npm start` serves it) is made of, and whether a build is fresh.
| Plain JavaScript: bin/start.js runs it without a TypeScript loader; bin/build.ts shares it
| (types in build_stamp.d.ts).
*/
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Compiled into the build (their TypeScript; other files in them are copied as they are). */
export const COMPILED = [
  'adonisrc.ts',
  'app',
  'bin',
  'commands',
  'config',
  'database',
  'plugins',
  'providers',
  'start',
]

/** Copied into the build as they are: the console's root view and its bundle (public/assets). */
export const COPIED = ['resources/views', 'public']

/**
 * Also change what a build holds: the console's sources (the build remakes its bundle), the
 * imports map (package.json) and the compiler's options.
 */
const INPUTS = ['resources/admin', 'vite.config.ts', 'package.json', 'tsconfig.json']

/** Written last into a finished build: the sources' fingerprint and where the checkout is. */
export const STAMP = 'quire-build.json'

/** Never part of the server: dependencies and tests. */
export function isTestOrModules(relativePath) {
  return /(^|\/)(node_modules|tests)$/.test(relativePath)
}

/**
 * The files under `entries` (paths relative to `root`, files or folders), sorted, skipping
 * every folder `skip` names.
 */
export function listFiles(root, entries, skip = isTestOrModules) {
  const files = []
  const visit = (relativePath) => {
    const info = statSync(join(root, relativePath), { throwIfNoEntry: false })
    if (!info) return
    if (!info.isDirectory()) return files.push(relativePath)
    if (skip(relativePath)) return
    for (const entry of readdirSync(join(root, relativePath)).sort()) {
      visit(`${relativePath}/${entry}`)
    }
  }
  for (const entry of entries) visit(entry)
  return files
}

/**
 * A digest of every input's path, size and modification time: a file added, removed, renamed
 * or edited (even to an older time, as a branch switch does) changes it.
 */
export function sourceFingerprint(root) {
  const hash = createHash('sha256')
  for (const file of listFiles(root, [...COMPILED, ...COPIED, ...INPUTS])) {
    const info = statSync(join(root, file))
    hash.update(`${file}\t${info.size}\t${info.mtimeMs}\n`)
  }
  return hash.digest('hex')
}

/** The stamp of the build in `outDir`, or null when there is no finished build. */
export function readStamp(outDir) {
  try {
    return JSON.parse(readFileSync(join(outDir, STAMP), 'utf8'))
  } catch {
    return null
  }
}

/** Whether `outDir` holds a finished build of the sources as they are now. */
export function buildIsFresh(root, outDir) {
  return readStamp(outDir)?.fingerprint === sourceFingerprint(root)
}
