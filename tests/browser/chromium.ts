import { existsSync, mkdirSync } from 'node:fs'
import app from '@adonisjs/core/services/app'
import type { Browser, Page } from 'playwright-core'

/** Debian's Chromium (apt-get install chromium); a browser is never downloaded. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const hasChromium = existsSync(CHROMIUM)
export const noChromium = `no Chromium at ${CHROMIUM} (apt-get install chromium)`

/** Where the browser tests save what they saw (look at them before you stop). */
export const SHOTS = app.makePath('tmp', 'console-screens')

export async function launch(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true })
  const { chromium } = await import('playwright-core')
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
}

export const shot = (page: Page, name: string) =>
  page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true })
