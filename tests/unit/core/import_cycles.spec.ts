import { test } from '@japa/runner'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * No module imports itself through others. A circle makes one of its modules see the other's
 * exports as undefined while both are first loading (which one depends on who imports first), a
 * failure that shows only at boot or in one test order. Type-only imports are erased at compile
 * time and dynamic imports (the manifests' lazy entries) run later, so neither counts.
 */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const FOLDERS = ['app', 'plugins', 'providers', 'start', 'config']
const SKIP = new Set(['node_modules', 'tests', 'build', 'tmp'])
const STATIC_IMPORT = /(?:^|\n)\s*(?:import|export)\s+(type\s+)?[^'"`;]*?\sfrom\s+['"]([^'"]+)['"]/g
const SIDE_EFFECT_IMPORT = /(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => [])
  const found: string[] = []
  for (const entry of entries) {
    const full = path.join(folder, entry.name)
    if (entry.isDirectory()) {
      if (!SKIP.has(entry.name)) found.push(...(await sourceFiles(full)))
    } else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
      found.push(full)
    }
  }
  return found
}

async function importGraph() {
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'))
  const aliases = Object.entries(pkg.imports as Record<string, string>)
  const perFolder = await Promise.all(FOLDERS.map((f) => sourceFiles(path.join(ROOT, f))))
  const files = perFolder.flat()
  const known = new Set(files)
  const resolve = (from: string, specifier: string) => {
    let target: string | undefined
    if (specifier.startsWith('.')) target = path.resolve(path.dirname(from), specifier)
    for (const [alias, mapped] of aliases) {
      const prefix = alias.replace('*', '')
      if (!target && specifier.startsWith(prefix))
        target = path.join(ROOT, mapped.replace('*', specifier.slice(prefix.length)))
    }
    if (!target) return undefined
    const base = target.replace(/\.js$/, '')
    return [`${base}.ts`, `${base}.tsx`, `${base}/index.ts`].find((candidate) =>
      known.has(candidate)
    )
  }
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const source = await readFile(file, 'utf8')
    const specifiers = [
      ...[...source.matchAll(STATIC_IMPORT)].filter((m) => !m[1]).map((m) => m[2]),
      ...[...source.matchAll(SIDE_EFFECT_IMPORT)].map((m) => m[1]),
    ]
    graph.set(
      file,
      specifiers.map((s) => resolve(file, s)).filter((r): r is string => r !== undefined)
    )
  }
  return graph
}

/** Tarjan's strongly connected components: every component of two or more modules is a circle. */
function circles(graph: Map<string, string[]>) {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (node: string) => {
    index.set(node, counter)
    low.set(node, counter++)
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!))
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(path.relative(ROOT, member))
      } while (member !== node)
      if (component.length > 1) found.push(component.sort())
    }
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node)
  return found
}

test.group('import circles', () => {
  test('no module of the server imports itself through others', async ({ assert }) => {
    const graph = await importGraph()
    assert.isAbove(graph.size, 100, 'the source folders were found')
    const serializer = [...graph.keys()].find((f) => f.endsWith('user_info_serializer.ts'))!
    assert.isNotEmpty(graph.get(serializer), 'imports are read')
    assert.deepEqual(circles(graph), [])
  })
})
