import { mkdir, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'

/**
 * The temp folder of multipart file parts (`<os temp>/quire-uploads`, TMPDIR honoured), read at
 * each call so a process started with another TMPDIR (a test's child server) has its own.
 */
export function uploadDir() {
  return join(tmpdir(), 'quire-uploads')
}

/** A new temp file's path (its folder made): the process id first, so a leftover names its instance. */
export async function uploadPath() {
  const dir = uploadDir()
  await mkdir(dir, { recursive: true })
  return join(dir, `${process.pid}-${randomUUID()}`)
}

/**
 * A file in the temp folder is a leftover once nothing wrote to it for this long. Several
 * instances may share one temp folder, so the sweep cannot remove "everything older than this
 * process": a sibling's upload in progress is written continuously (its modification time stays
 * fresh), and a request cannot outlive Node's requestTimeout (300 s) nor an operation an hour.
 */
export const LEFTOVER_AGE_MS = 60 * 60 * 1000

/**
 * Removes the temp folder's leftovers: files of an instance that was killed while a request was
 * running (every request that ends removes its own files). Returns how many were removed.
 */
export async function sweepUploads(maxAgeMs = LEFTOVER_AGE_MS): Promise<number> {
  const dir = uploadDir()
  const names = await readdir(dir).catch(() => [] as string[])
  const oldest = Date.now() - maxAgeMs
  let removed = 0
  for (const name of names) {
    const path = join(dir, name)
    // Another instance may sweep or finish the same file meanwhile: a vanished file is no error.
    const info = await stat(path).catch(() => null)
    if (!info?.isFile() || info.mtimeMs > oldest) continue
    await rm(path, { force: true }).catch(() => {})
    removed++
  }
  return removed
}

/**
 * Sweeps now (at start: what a killed process left) and then every LEFTOVER_AGE_MS (what a killed
 * sibling sharing the folder left), on a timer that never keeps the process alive.
 */
export function startUploadSweeper(onError: (error: unknown) => void) {
  const sweep = () => sweepUploads().catch(onError)
  void sweep()
  setInterval(sweep, LEFTOVER_AGE_MS).unref()
}
