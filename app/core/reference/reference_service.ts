import type { PluginRegistry } from '#core/plugins/plugin_registry'
import { buildCatalogue, type Catalogue } from './catalogue.js'
import { buildOpenApi, type DocumentLabel } from './openapi.js'
import { buildAsyncApi } from './asyncapi.js'

/**
 * The generated documents of this server: built from the registry once per
 * process (the registry does not change after boot), kept as JSON text.
 */
export class ReferenceService {
  private catalogueLoading: Promise<Catalogue> | null = null
  private documents = new Map<string, string>()

  constructor(
    private registry: PluginRegistry,
    private label: { envLabel: string; apiVersion: string }
  ) {}

  catalogue(): Promise<Catalogue> {
    this.catalogueLoading ??= buildCatalogue(this.registry).catch((error) => {
      this.catalogueLoading = null
      throw error
    })
    return this.catalogueLoading
  }

  private documentLabel(prefix: string): DocumentLabel {
    return {
      prefix,
      apiVersion: this.label.apiVersion,
      createdVNB: `${this.label.envLabel}-${this.label.apiVersion}`,
    }
  }

  async openApi(prefix: string): Promise<string> {
    const key = `openapi ${prefix}`
    let text = this.documents.get(key)
    if (!text) {
      text = JSON.stringify(buildOpenApi(await this.catalogue(), this.documentLabel(prefix)))
      this.documents.set(key, text)
    }
    return text
  }

  /** `host` is the Host the client reached (AsyncAPI servers need a host). */
  async asyncApi(prefix: string, host: string): Promise<string> {
    const key = `asyncapi ${prefix} ${host}`
    let text = this.documents.get(key)
    if (!text) {
      text = JSON.stringify(buildAsyncApi(await this.catalogue(), this.documentLabel(prefix), host))
      // A bounded cache: hosts come from requests.
      if (this.documents.size > 50) this.documents.clear()
      this.documents.set(key, text)
    }
    return text
  }
}
