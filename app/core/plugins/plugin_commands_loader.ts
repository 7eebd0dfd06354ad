import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { FsLoader } from '@adonisjs/core/ace'
import type { CommandMetaData } from '@adonisjs/core/types/ace'
import plugins from '#config/plugins'

/**
 * adonisrc `commands` entries are loader modules, not folders: this one
 * serves the ace commands of every enabled plugin (plugins/<id>/commands).
 */
const loaders = plugins.enabled
  .map((id) => fileURLToPath(new URL(`../../../plugins/${id}/commands`, import.meta.url)))
  .filter((directory) => existsSync(directory))
  .map((directory) => new FsLoader<any>(directory))

const owners = new Map<string, FsLoader<any>>()

export async function getMetaData(): Promise<CommandMetaData[]> {
  const all: CommandMetaData[] = []
  for (const loader of loaders) {
    for (const meta of await loader.getMetaData()) {
      owners.set(meta.commandName, loader)
      all.push(meta)
    }
  }
  return all
}

export async function getCommand(meta: CommandMetaData) {
  return owners.get(meta.commandName)?.getCommand(meta) ?? null
}
