import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from '@japa/runner'
import {
  extOfName,
  identify,
  isDecodableImage,
  sniffBytes,
  sniffFile,
} from '#plugins/media/lib/sniff'

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(
    parts.map((part) =>
      typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part)
    )
  )

test.group('sniff: a file is what its first bytes say', () => {
  test('images, audio, video, PDF and containers by their signatures', ({ assert }) => {
    const cases: [Buffer, string, string | null][] = [
      [bytes([0xff, 0xd8, 0xff, 0xe0]), 'image/jpeg', 'jpg'],
      [bytes('\x89PNG\r\n\x1a\n'), 'image/png', 'png'],
      [bytes('GIF89a'), 'image/gif', 'gif'],
      [bytes('RIFF\0\0\0\0WEBP'), 'image/webp', 'webp'],
      [bytes('II*\0'), 'image/tiff', 'tif'],
      [bytes('\0\0\0\x1cftypavif'), 'image/avif', 'avif'],
      [bytes('\0\0\0\x1cftypheic'), 'image/heic', 'heic'],
      [bytes('RIFF\0\0\0\0WAVE'), 'audio/wav', 'wav'],
      [bytes('RIFF\0\0\0\0AVI '), 'video/x-msvideo', 'avi'],
      [bytes('\0\0\0\x1cftypM4A '), 'audio/mp4', 'm4a'],
      [bytes('\0\0\0\x1cftypqt  '), 'video/quicktime', 'mov'],
      [bytes('\0\0\0\x1cftypisom'), 'video/mp4', 'mp4'],
      [bytes([0x1a, 0x45, 0xdf, 0xa3]), 'video/webm', 'webm'],
      [bytes('OggS'), 'audio/ogg', 'ogg'],
      [bytes('fLaC'), 'audio/flac', 'flac'],
      [bytes('ID3\x03'), 'audio/mpeg', 'mp3'],
      [bytes([0xff, 0xfb, 0x90]), 'audio/mpeg', 'mp3'],
      [bytes('%PDF-1.7'), 'application/pdf', 'pdf'],
      [bytes('PK\x03\x04'), 'application/zip', null],
      [bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), 'application/x-ole-storage', null],
    ]
    for (const [input, mime, ext] of cases) {
      const found = sniffBytes(input)
      assert.deepEqual([found.mime, found.ext], [mime, ext], mime)
    }
  })

  test('HTML, script, SVG, text and nothing at all are unrecognised documents', ({ assert }) => {
    for (const text of ['<html><script>alert(1)</script>', '<svg xmlns="x"/>', 'hello', ''])
      assert.deepEqual(sniffBytes(Buffer.from(text)), {
        kind: 'doc',
        mime: 'application/octet-stream',
        ext: null,
      })
    // A reserved MPEG version/layer is no audio frame.
    assert.equal(sniffBytes(bytes([0xff, 0xe0])).mime, 'application/octet-stream')
  })

  test('identify: the content decides; a name only names unrecognised or container content', ({
    assert,
  }) => {
    const html = sniffBytes(Buffer.from('<html>'))
    assert.equal(identify(html, 'photo.jpg').ext, 'bin', 'a name claiming a known type')
    assert.equal(identify(html, 'page.html').ext, 'bin')
    assert.equal(identify(html, 'notes.md').ext, 'md')
    assert.equal(identify(html, 'no extension').ext, 'bin')
    assert.equal(identify(html, 'notes.md').mime, 'application/octet-stream')
    const zip = sniffBytes(bytes('PK\x03\x04'))
    assert.equal(identify(zip, 'report.docx').ext, 'docx')
    assert.match(identify(zip, 'report.docx').mime, /wordprocessingml/)
    assert.equal(identify(zip, 'report.pdf').ext, 'zip')
    const jpeg = sniffBytes(bytes([0xff, 0xd8, 0xff]))
    assert.equal(identify(jpeg, 'really.png').ext, 'jpg')
  })

  test('extOfName and isDecodableImage', ({ assert }) => {
    assert.equal(extOfName(' Photo.JPEG '), 'jpeg')
    assert.isNull(extOfName('archive.tar.'))
    assert.isNull(extOfName('x.a-b'))
    assert.isTrue(isDecodableImage('png'))
    assert.isFalse(isDecodableImage('heic'))
  })

  test('sniffFile reads the first bytes of a file on disk', async ({ assert }) => {
    const dir = await mkdtemp(join(tmpdir(), 'quire-sniff-'))
    try {
      const path = join(dir, 'a')
      await writeFile(path, Buffer.concat([Buffer.from('%PDF-1.4'), Buffer.alloc(1000)]))
      const pdf = await sniffFile(path)
      assert.equal(pdf.mime, 'application/pdf')
      await writeFile(path, '')
      const empty = await sniffFile(path)
      assert.equal(empty.mime, 'application/octet-stream')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
