import { AxeBuilder } from '@axe-core/playwright'
import type { AxeResults, Result } from 'axe-core'
import type { Page } from 'playwright-core'

/**
 * Rules that fail a page whatever impact axe gives them: issue 22 asks for a `main` landmark
 * on every page, and axe rates its absence "moderate" only.
 */
const ALWAYS_FAIL = new Set(['landmark-one-main'])

const failing = (violation: Result) =>
  violation.impact === 'serious' || violation.impact === 'critical' || ALWAYS_FAIL.has(violation.id)

/** One line per violation and up to three of its elements, readable in a test failure. */
export function describeViolations(violations: Result[]): string {
  return violations
    .map((violation) => {
      const nodes = violation.nodes
        .slice(0, 3)
        .map((node) => `    ${node.target.join(' ')}: ${node.failureSummary?.split('\n')[1] ?? ''}`)
        .join('\n')
      const more = violation.nodes.length > 3 ? `\n    ... ${violation.nodes.length - 3} more` : ''
      return `  [${violation.impact}] ${violation.id}: ${violation.help}\n${nodes}${more}`
    })
    .join('\n')
}

/**
 * Runs axe-core (WCAG 2.x A and AA rules and axe's best practices) on the page as it is now
 * and throws when it finds a serious or critical violation, or no `main` landmark. `label`
 * names the page in the message (e.g. "users at 390 px"). Returns axe's results for callers
 * that want to report the minor ones. The page must come from `browser.newContext()` (as
 * `openPage` in console_browser.ts makes it), not `browser.newPage()`: axe needs the context.
 *
 *   await expectNoSeriousViolations(page, 'audit log at 1366 px')
 */
export async function expectNoSeriousViolations(page: Page, label: string): Promise<AxeResults> {
  const results = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'])
    .analyze()
  const bad = results.violations.filter(failing)
  if (bad.length > 0) {
    throw new Error(
      `axe-core: ${bad.length} serious or critical violation(s) on ${label} (${page.url()}):\n` +
        describeViolations(bad)
    )
  }
  return results
}
