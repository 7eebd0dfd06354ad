import QRCode from 'qrcode'

/**
 * A QR code of `text` (an otpauth:// URI) as an SVG data URL, made here on the
 * server: the secret never goes to a QR service, and the page's CSP (img-src
 * 'self' data:) needs no exception.
 */
export async function qrDataUrl(text: string): Promise<string> {
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`
}
