import { spawn } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * Runs a guide's code blocks the way its reader would: ```sh blocks with bash (strict mode),
 * ```js blocks with node, in order, in one working folder. A ```js file=NAME block is written
 * as NAME (a module later blocks import) and not run. A ```text block is the output the code
 * block before it prints: each of its lines must match one printed line, in order (`...`
 * matches anything); other printed lines may come between.
 */

export interface Step {
  lang: 'sh' | 'js'
  file?: string
  code: string
  /** 1-based line of the opening fence in the markdown. */
  line: number
  expected?: string[]
}

export interface StepResult {
  step: Step
  code: number | null
  stdout: string
  stderr: string
}

const FENCE = /^```(\S*)(.*)$/

export function parseGuide(markdown: string): Step[] {
  const lines = markdown.split('\n')
  const steps: Step[] = []
  let open: { lang: string; info: string; line: number; body: string[] } | undefined
  for (const [index, line] of lines.entries()) {
    if (!open) {
      const fence = FENCE.exec(line)
      if (fence) open = { lang: fence[1], info: fence[2].trim(), line: index + 1, body: [] }
      continue
    }
    if (line !== '```') {
      open.body.push(line)
      continue
    }
    const body = open.body.join('\n')
    if (open.lang === 'sh' || open.lang === 'js') {
      const file = /(?:^|\s)file=(\S+)/.exec(open.info)?.[1]
      steps.push({ lang: open.lang, file, code: body, line: open.line })
    } else if (open.lang === 'text') {
      const last = steps.at(-1)
      if (!last || last.expected) {
        throw new Error(`line ${open.line}: a text block must follow a sh or js block`)
      }
      last.expected = open.body.filter((expected) => expected.trim() !== '')
    }
    open = undefined
  }
  if (open) throw new Error(`line ${open.line}: unclosed code block`)
  return steps
}

/** `...` matches anything, the rest literally; the whole (trimmed) line must match. */
function linePattern(expected: string) {
  const parts = expected.trim().split('...')
  const escaped = parts.map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return new RegExp(`^${escaped.join('.*')}$`)
}

/** Where the printed lines stop matching the expected ones, or undefined when all match. */
export function missingLine(printed: string, expected: string[]): string | undefined {
  const lines = printed.split('\n').map((line) => line.trim())
  let from = 0
  for (const wanted of expected) {
    const pattern = linePattern(wanted)
    const found = lines.findIndex((line, index) => index >= from && pattern.test(line))
    if (found === -1) return wanted
    from = found + 1
  }
  return undefined
}

function run(
  command: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // Its own process group: a hung block is ended whole (its background jobs too).
    const child = spawn(command, args, {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    // A guard against a block that never ends, not a measure of speed.
    const guard = setTimeout(() => {
      stderr += `\n[killed: still running after ${timeoutMs} ms]`
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {}
    }, timeoutMs)
    child.on('error', reject)
    // Whatever the block left running in the background (a stream it did not end) ends with it,
    // and lets go of the output pipes it inherited.
    child.on('exit', () => {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {}
    })
    child.on('close', (code) => {
      clearTimeout(guard)
      resolve({ code, stdout, stderr })
    })
  })
}

/** `env -0` output: NAME=value pairs separated by NUL. */
function parseEnv(dump: string): Record<string, string> {
  const vars: Record<string, string> = {}
  for (const entry of dump.split('\0')) {
    const at = entry.indexOf('=')
    if (at > 0) vars[entry.slice(0, at)] = entry.slice(at + 1)
  }
  return vars
}

/**
 * Runs every step; variables a sh block exports reach the blocks after it. Stops at the first
 * step that exits non-zero or does not print what it should, and throws with its output.
 */
export async function runGuide(
  steps: Step[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }
): Promise<StepResult[]> {
  await mkdir(options.cwd, { recursive: true })
  let env = { ...options.env }
  const results: StepResult[] = []
  for (const [index, step] of steps.entries()) {
    let outcome: { code: number | null; stdout: string; stderr: string }
    if (step.lang === 'js' && step.file) {
      await writeFile(join(options.cwd, step.file), step.code + '\n')
      outcome = { code: 0, stdout: '', stderr: '' }
    } else if (step.lang === 'js') {
      const script = join(options.cwd, `step-${index}.mjs`)
      await writeFile(script, step.code + '\n')
      outcome = await run(process.execPath, [script], options.cwd, env, options.timeoutMs ?? 30_000)
    } else {
      const script = join(options.cwd, `step-${index}.sh`)
      const envFile = join(options.cwd, `step-${index}.env`)
      await writeFile(
        script,
        `set -euo pipefail\n${step.code}\nenv -0 > ${JSON.stringify(envFile)}\n`
      )
      outcome = await run('bash', [script], options.cwd, env, options.timeoutMs ?? 30_000)
      if (outcome.code === 0) env = parseEnv(await readFile(envFile, 'utf8'))
    }
    const result = { step, ...outcome }
    results.push(result)
    const where = `the ${step.lang} block at line ${step.line}`
    if (outcome.code !== 0) {
      throw new Error(
        `${where} exited ${outcome.code}\n--- stdout\n${outcome.stdout}\n--- stderr\n${outcome.stderr}`
      )
    }
    const missing = step.expected && missingLine(outcome.stdout, step.expected)
    if (missing !== undefined) {
      throw new Error(
        `${where} did not print "${missing}"\n--- stdout\n${outcome.stdout}\n--- stderr\n${outcome.stderr}`
      )
    }
  }
  return results
}
