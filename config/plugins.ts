/*
|--------------------------------------------------------------------------
| Enabled plugins, in dependency order
|--------------------------------------------------------------------------
|
| Each id is a folder under plugins/ holding a plugin.ts manifest. A plugin
| may depend only on plugins listed before it. This list drives the plugin
| loader and the migration paths; nothing else needs editing when a plugin is
| added (`node ace make:plugin NAME` appends to it).
*/
const plugins = {
  enabled: ['books', 'tables', 'media', 'gateways', 'webhooks', 'auth_service'],
}

export default plugins
