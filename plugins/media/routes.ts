import quireConfig from '#config/quire'
import type { PluginRoutes } from '#core/plugins/define_plugin'

/**
 * The /dbi URL family (spec 4.A.4) and the resumable-upload endpoint, under
 * every environment prefix (/live, /dev: QUIRE_URL_PREFIXES), like api.php.
 * No middleware: these are hot, unauthenticated-by-cookie paths.
 */
const registerMediaRoutes: PluginRoutes = async (router, { app }) => {
  const { default: MediaController } = await import('./http/media_controller.js')
  const { default: TusController } = await import('./http/tus_controller.js')
  const media = await app.container.make(MediaController)
  const tus = await app.container.make(TusController)
  for (const prefix of quireConfig.urlPrefixes) {
    router.route(`${prefix}/dbi/*`, ['GET', 'HEAD', 'POST'], (ctx) => media.handle(ctx))
    router.get(`${prefix}/upload/upload_meta/:fileId`, (ctx) => tus.meta(ctx))
    router.route(`${prefix}/upload`, ['POST', 'OPTIONS'], (ctx) => tus.handle(ctx))
    router.route(`${prefix}/upload/*`, ['HEAD', 'PATCH', 'DELETE', 'OPTIONS', 'GET'], (ctx) =>
      tus.handle(ctx)
    )
  }
}

export default registerMediaRoutes
