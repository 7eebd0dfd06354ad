import { defineConfig, stores } from '@adonisjs/limiter'
import quireConfig from '#config/quire'

/** Failed-login throttling: in memory by default, in Redis when configured (shared by all instances). */
const limiterConfig = defineConfig({
  default: quireConfig.redisEnabled ? 'redis' : 'memory',
  stores: {
    redis: stores.redis({ connectionName: 'main', keyPrefix: 'limiter' } as any),
    memory: stores.memory({}),
  },
})

export default limiterConfig

declare module '@adonisjs/limiter/types' {
  export interface LimitersList extends InferLimiters<typeof limiterConfig> {}
}
