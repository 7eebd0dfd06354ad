/**
 * npm run bench:media — image derivatives and resumable uploads, over HTTP
 * against a real Quire server (production mode).
 *
 * Targets (issue 13), on this machine:
 *   tb of a 12-megapixel JPEG: first request <= 150 ms, cached p50 <= 3 ms
 *   200 cached tb requests/s sustained (evenly spaced, open loop: bench/lib/paced_load.ts) with
 *   p99 <= 20 ms; autocannon's burst-per-second rate mode is printed beside it
 *   tus upload of 1 GiB on loopback >= 200 MB/s, the server's resident memory flat meanwhile
 *
 *   npm run bench:media                          # SQLite in tmp/bench-media, 1 GiB upload
 *   BENCH_UPLOAD_MB=128 npm run bench:media      # a smaller run
 *
 * Settings: BENCH_UPLOAD_MB (1024), BENCH_CHUNK_MB (tus PATCH size, 256), BENCH_SAMPLES (cached
 * reads timed one by one, 500), BENCH_RATE (requests/s, 200), BENCH_DURATION (s, 10), and the
 * usual DB_* / REDIS_* variables.
 */
import { mkdirSync, readFileSync } from 'node:fs'
import { Readable } from 'node:stream'
import { performance } from 'node:perf_hooks'
import autocannon from 'autocannon'
import sharp from 'sharp'
import { pacedLoad } from './lib/paced_load.js'
import { ace, benchEnv, buildCompiled, signIn, startQuire } from './lib/quire_process.js'

const UPLOAD_MB = Number(process.env.BENCH_UPLOAD_MB ?? 1024)
const CHUNK_MB = Number(process.env.BENCH_CHUNK_MB ?? 256)
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 500)
const RATE = Number(process.env.BENCH_RATE ?? 200)
const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const PASSWORD = 'bench-password'

const env = benchEnv({
  DATA_DIR: process.env.DATA_DIR ?? 'tmp/bench-media',
  MEDIA_MAX_UPLOAD_BYTES: String(Math.max(UPLOAD_MB, 1) * 1024 * 1024 * 2),
})
mkdirSync(env.DATA_DIR!, { recursive: true })
console.log(
  `\nbench:media on ${env.DB_CONNECTION ?? 'sqlite'}${env.REDIS_HOST ? ' + redis' : ''}\n`
)
ace(env, 'migration:run', '--force')
try {
  ace(env, 'user:create', 'benchmedia', 'media@bench.local', PASSWORD)
} catch {
  // Already there from an earlier run.
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

/** The resident memory of a process, in MiB (Linux). */
function rssOf(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const match = /VmRSS:\s+(\d+) kB/.exec(status)
  return match ? Number(match[1]) / 1024 : Number.NaN
}

// The compiled build, as `npm start` serves it (no TypeScript loader in the serving process).
const quire = await startQuire(env, { compiled: buildCompiled() })
try {
  const session = await signIn(quire.url, 'media@bench.local', PASSWORD)
  const auth = { o_u: session.o_u, u_c: session.o_u, sesskey: session.sesskey }
  const api = async (params: Record<string, string>, file?: { bytes: Buffer; name: string }) => {
    const form = new FormData()
    for (const [key, value] of Object.entries({ ...auth, ...params })) form.append(key, value)
    if (file) form.append('qqfile', new Blob([file.bytes]), file.name)
    const response = await fetch(`${quire.url}/live/api.php`, { method: 'POST', body: form })
    const body = (await response.json()) as Record<string, any>
    if (body.status !== 'ok') throw new Error(`${params.req} failed: ${JSON.stringify(body)}`)
    return body
  }
  const bookCode = `media${Date.now().toString(36)}`
  await api({ req: 'createBook', b_c: bookCode })
  const { createMessageId: smid } = await api({ req: 'sendMsg', b_c: bookCode, msg: 'bench' })

  // ---- tb of a 12-megapixel JPEG --------------------------------------------
  const photo = await sharp({
    create: {
      width: 4000,
      height: 3000,
      channels: 3,
      background: { r: 0, g: 0, b: 0 },
      noise: { type: 'gaussian', mean: 128, sigma: 40 },
    },
  })
    .jpeg({ quality: 90 })
    .toBuffer()
  const uploaded = await api(
    { req: 'fileUpload', b_c: bookCode, smid: String(smid) },
    { bytes: photo, name: 'photo.jpg' }
  )
  const tbUrl = `${quire.url}/live/dbi/in/tb/${uploaded.uuid}/photo.jpg`
  const timed = async () => {
    const started = performance.now()
    const response = await fetch(tbUrl)
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`tb answered ${response.status}`)
    return performance.now() - started
  }
  const first = await timed()
  const cached: number[] = []
  for (let i = 0; i < SAMPLES; i++) cached.push(await timed())
  cached.sort((a, b) => a - b)
  // The same loop on /health: what any request costs on this machine right now (shared cores).
  const baseline: number[] = []
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now()
    const response = await fetch(`${quire.url}/health`)
    await response.arrayBuffer()
    baseline.push(performance.now() - started)
  }
  baseline.sort((a, b) => a - b)
  const startedSharp = performance.now()
  await sharp(photo).rotate().resize(150, 150, { fit: 'inside' }).jpeg().toBuffer()
  const sharpAlone = performance.now() - startedSharp
  console.log(`12-megapixel JPEG (${(photo.length / 1e6).toFixed(1)} MB)`)
  console.log(
    `  tb first request: ${first.toFixed(1)} ms (sharp alone in this process: ${sharpAlone.toFixed(1)} ms)`
  )
  console.log(
    `  baseline /health, ${SAMPLES} sequential: p50 ${percentile(baseline, 50).toFixed(2)} ms, p99 ${percentile(baseline, 99).toFixed(2)} ms`
  )
  console.log(
    `  tb cached, ${SAMPLES} sequential: p50 ${percentile(cached, 50).toFixed(2)} ms, p99 ${percentile(cached, 99).toFixed(2)} ms`
  )

  // ---- cached tb at a fixed rate ----------------------------------------------
  // The target: RATE requests a second, evenly spaced, latency counted from when each was due.
  const paced = await pacedLoad(tbUrl, RATE, DURATION)
  console.log(
    `  tb cached at ${RATE} req/s, evenly spaced, for ${DURATION} s: ${paced.achievedRate.toFixed(0)} req/s, ` +
      `p50 ${percentile(paced.latencies, 50).toFixed(2)} ms, p99 ${percentile(paced.latencies, 99).toFixed(2)} ms, ` +
      `max ${paced.latencies.at(-1)?.toFixed(1)} ms, errors ${paced.errors}`
  )
  // For comparison, autocannon's rate mode: the same RATE as a burst at the top of each second.
  const burst = await autocannon({
    url: tbUrl,
    connections: 20,
    overallRate: RATE,
    duration: DURATION,
  })
  console.log(
    `  tb cached, ${RATE} requests in a burst each second over 20 connections (autocannon): ` +
      `p50 ${burst.latency.p50} ms, p99 ${burst.latency.p99} ms, errors ${burst.errors + burst.non2xx}`
  )

  // ---- tus upload -------------------------------------------------------------
  const size = UPLOAD_MB * 1024 * 1024
  const meta = { ...auth, b_c: bookCode, b_o: session.o_u, smid: String(smid), filename: 'big.mp4' }
  const created = await fetch(`${quire.url}/live/upload`, {
    method: 'POST',
    headers: {
      'Tus-Resumable': '1.0.0',
      'Upload-Length': String(size),
      'Upload-Metadata': Object.entries(meta)
        .map(([key, value]) => `${key} ${Buffer.from(value).toString('base64')}`)
        .join(','),
    },
  })
  const location = created.headers.get('location')
  if (created.status !== 201 || !location)
    throw new Error(`tus creation answered ${created.status}`)
  // An MP4 header, then filler: streamed from one reused buffer, never the whole file in memory.
  const block = Buffer.alloc(1024 * 1024, 0x11)
  Buffer.from([0, 0, 0, 0x18, ...Buffer.from('ftypisom\0\0\x02\0isomiso2', 'latin1')]).copy(block)
  const chunk = CHUNK_MB * 1024 * 1024
  const rssBefore = rssOf(quire.child.pid!)
  let rssMax = rssBefore
  const sampler = setInterval(() => {
    rssMax = Math.max(rssMax, rssOf(quire.child.pid!))
  }, 100)
  const started = performance.now()
  let offset = 0
  while (offset < size) {
    const length = Math.min(chunk, size - offset)
    const body = Readable.from(
      (function* () {
        for (let sent = 0; sent < length; sent += block.length)
          yield offset + sent === 0
            ? block
            : block.subarray(0, Math.min(block.length, length - sent))
      })()
    )
    const response = await fetch(location, {
      method: 'PATCH',
      headers: {
        'Tus-Resumable': '1.0.0',
        'Upload-Offset': String(offset),
        'Content-Type': 'application/offset+octet-stream',
        'Content-Length': String(length),
      },
      body: body as any,
      duplex: 'half',
    } as RequestInit)
    if (response.status !== 204)
      throw new Error(`PATCH answered ${response.status}: ${await response.text()}`)
    offset = Number(response.headers.get('upload-offset'))
  }
  const seconds = (performance.now() - started) / 1000
  clearInterval(sampler)
  console.log(`tus upload of ${UPLOAD_MB} MiB in ${CHUNK_MB} MiB PATCHes`)
  console.log(
    `  ${(size / 1e6 / seconds).toFixed(0)} MB/s (${seconds.toFixed(2)} s, attach included)`
  )
  console.log(
    `  server RSS: ${rssBefore.toFixed(0)} MiB before, ${rssMax.toFixed(0)} MiB at most while uploading`
  )
} finally {
  await quire.stop()
}
