import { test } from '@japa/runner'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The kernel and the console know no plugin: nothing under app/ imports from
 * plugins/ (plugins contribute through their manifests and the kernel's
 * contracts). The one exception is the loader that reads the manifests.
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const LOADER = path.join('app', 'core', 'plugins', 'plugin_loader.ts')
const PLUGIN_IMPORT = /(?:from\s+|import\s*\(\s*)['"`](?:#plugins\/|(?:\.\.\/)+plugins\/)/

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true })
  const found: string[] = []
  for (const entry of entries) {
    const full = path.join(folder, entry.name)
    if (entry.isDirectory()) found.push(...(await sourceFiles(full)))
    else if (/\.tsx?$/.test(entry.name)) found.push(full)
  }
  return found
}

test('nothing under app/ imports a plugin (but the manifest loader)', async ({ assert }) => {
  const offenders: string[] = []
  for (const file of await sourceFiles(path.join(ROOT, 'app'))) {
    const relative = path.relative(ROOT, file)
    if (relative === LOADER) continue
    const text = await readFile(file, 'utf8')
    text.split('\n').forEach((line, index) => {
      if (PLUGIN_IMPORT.test(line)) offenders.push(`${relative}:${index + 1}: ${line.trim()}`)
    })
  }
  assert.deepEqual(offenders, [])
})
