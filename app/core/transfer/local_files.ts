/**
 * How the export reads a file of this server by its name (uuid or internName),
 * without the kernel knowing where files live: the plugin that stores files
 * (media) provides the reader at boot. Without one, no book has files.
 */
export class LocalFiles {
  private reader: ((name: string) => Promise<Buffer | null>) | null = null

  /** The file-storing plugin's reader (its provider's boot). */
  provide(reader: (name: string) => Promise<Buffer | null>) {
    this.reader = reader
  }

  async read(name: string): Promise<Buffer | null> {
    return this.reader ? this.reader(name) : null
  }
}

export const localFiles = new LocalFiles()
