import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Folders whose files make the console's bundle (and the /docs page's, docs/api-reference.md). */
const SOURCES = ['resources/admin', 'resources/docs', 'plugins', 'vite.config.ts']

function newestSource(root: string): number {
  let newest = 0
  const visit = (path: string, inPlugins: boolean) => {
    const info = statSync(path, { throwIfNoEntry: false })
    if (!info) return
    if (info.isFile()) {
      newest = Math.max(newest, info.mtimeMs)
      return
    }
    for (const entry of readdirSync(path)) {
      if (entry === 'node_modules') continue
      // Under plugins/, only plugins/<id>/admin/pages counts.
      if (inPlugins) {
        const pages = join(path, entry, 'admin', 'pages')
        if (existsSync(pages)) visit(pages, false)
      } else visit(join(path, entry), false)
    }
  }
  for (const source of SOURCES) visit(join(root, source), source === 'plugins')
  return newest
}

/** The manifest of the console's build, when it exists and is newer than every source file. */
export function consoleBuildIsFresh(root: string): boolean {
  const manifest = statSync(join(root, 'public/assets/.vite/manifest.json'), {
    throwIfNoEntry: false,
  })
  return Boolean(manifest && manifest.mtimeMs >= newestSource(root))
}

/**
 * Builds the console (vite build) when its build is missing or older than a
 * source file: `quire:setup` (npm start) and the console's tests call it, so
 * a fresh clone's `npm install && npm start` serves a built console.
 * Answers whether a build ran.
 */
export async function ensureConsoleBuilt(root: string): Promise<boolean> {
  if (consoleBuildIsFresh(root)) return false
  const { build } = await import('vite')
  await build({ root, configFile: join(root, 'vite.config.ts'), logLevel: 'warn' })
  return true
}
