import { createApiReference } from '@scalar/api-reference'
import '@scalar/api-reference/style.css'
import { socketView } from './socket_view'

/**
 * /docs: the server's OpenAPI document (api.php, media URLs, tus, the auth
 * service) and its AsyncAPI document (the socket), rendered by Scalar from
 * this bundle: no CDN, no fonts or telemetry from elsewhere, works offline.
 */
async function main() {
  const root = document.getElementById('docs')!
  const prefix = root.dataset.prefix ?? '/live'
  const asyncapi = await fetch(`${prefix}/asyncapi.json`).then((answer) => answer.json())
  createApiReference(root, {
    sources: [
      { title: 'api.php and HTTP (OpenAPI)', slug: 'api', url: `${prefix}/openapi.json` },
      { title: 'Socket (AsyncAPI)', slug: 'socket', content: socketView(asyncapi) },
    ],
    withDefaultFonts: false,
    telemetry: false,
    hideClientButton: true,
    showDeveloperTools: 'never',
    agent: { disabled: true },
  } as any)
}

void main()
