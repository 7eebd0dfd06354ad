import { test } from '@japa/runner'
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { STAMP, buildIsFresh, sourceFingerprint } from '../../../bin/build_stamp.js'

/** A small checkout (a source file, a view) and a build of it stamped with its fingerprint. */
function checkout() {
  const root = mkdtempSync(join(tmpdir(), 'quire-stamp-'))
  mkdirSync(join(root, 'app/core'), { recursive: true })
  mkdirSync(join(root, 'resources/views'), { recursive: true })
  writeFileSync(join(root, 'app/core/a.ts'), 'export const a = 1\n')
  writeFileSync(join(root, 'resources/views/page.edge'), '<p>page</p>\n')
  const outDir = join(root, 'build')
  const stamp = () => {
    mkdirSync(outDir, { recursive: true })
    writeFileSync(join(outDir, STAMP), JSON.stringify({ fingerprint: sourceFingerprint(root) }))
  }
  stamp()
  return { root, outDir, stamp }
}

test.group('build stamp (npm start rebuilds when the sources changed)', (group) => {
  const made: string[] = []
  group.each.teardown(() => {
    for (const root of made.splice(0)) rmSync(root, { recursive: true, force: true })
  })

  test('a build is fresh until a source is edited, added, removed or set back in time', ({
    assert,
  }) => {
    const { root, outDir, stamp } = checkout()
    made.push(root)
    assert.isTrue(buildIsFresh(root, outDir))

    writeFileSync(join(root, 'app/core/a.ts'), 'export const a = 2\n')
    assert.isFalse(buildIsFresh(root, outDir), 'edited')
    stamp()
    assert.isTrue(buildIsFresh(root, outDir))

    writeFileSync(join(root, 'app/core/b.ts'), 'export const b = 1\n')
    assert.isFalse(buildIsFresh(root, outDir), 'added')
    stamp()

    rmSync(join(root, 'resources/views/page.edge'))
    assert.isFalse(buildIsFresh(root, outDir), 'removed')
    stamp()

    // A branch switch can bring back a file older than the build.
    utimesSync(join(root, 'app/core/a.ts'), new Date(2001, 0, 1), new Date(2001, 0, 1))
    assert.isFalse(buildIsFresh(root, outDir), 'older modification time')
    stamp()

    // Tests and dependencies are not part of the server.
    mkdirSync(join(root, 'app/core/tests'))
    writeFileSync(join(root, 'app/core/tests/a.spec.ts'), '')
    assert.isTrue(buildIsFresh(root, outDir), 'a test file')
  })

  test('no build, or one without its stamp (unfinished), is stale', ({ assert }) => {
    const { root, outDir } = checkout()
    made.push(root)
    rmSync(join(outDir, STAMP))
    assert.isFalse(buildIsFresh(root, outDir))
    assert.isFalse(buildIsFresh(root, join(root, 'nowhere')))
  })
})
