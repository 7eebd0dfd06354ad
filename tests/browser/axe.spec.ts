import { test } from '@japa/runner'
import type { Browser } from 'playwright-core'
import { hasChromium, launch, noChromium } from './chromium.js'
import { expectNoSeriousViolations } from './axe.js'

/** The shared axe helper itself: it passes a clean page and fails the faults issue 22 names. */
test.group('browser: the axe-core helper', (group) => {
  let browser: Browser | undefined
  group.setup(async () => {
    if (hasChromium) browser = await launch()
  })
  group.teardown(async () => {
    await browser?.close()
  })

  const clean =
    '<!doctype html><html lang="en"><head><title>Clean</title></head>' +
    '<body><main><h1>Clean</h1><p>Readable text.</p></main></body></html>'

  test('a clean page passes; low contrast and a missing main landmark fail')
    .skip(!hasChromium, noChromium)
    .run(async ({ assert }) => {
      const context = await browser!.newContext()
      const page = await context.newPage()
      await page.setContent(clean)
      await expectNoSeriousViolations(page, 'a clean page')

      await page.setContent(clean.replace('<p>', '<p style="color:#aaa;background:#fff">'))
      await assert.rejects(() => expectNoSeriousViolations(page, 'grey on white'), /color-contrast/)

      await page.setContent(clean.replace(/<\/?main>/g, ''))
      await assert.rejects(() => expectNoSeriousViolations(page, 'no main'), /landmark-one-main/)
      await context.close()
    })
})
