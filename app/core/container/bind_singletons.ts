import type { Container } from '@adonisjs/core/container'
import type { ContainerBindings } from '@adonisjs/core/types'

/** A class whose constructor dependencies are declared with `@inject()`. */
type InjectableClass = (abstract new (...args: any[]) => unknown) & {
  containerInjections?: Record<PropertyKey, { dependencies: unknown[] }>
}

/**
 * Binds each class as a container singleton, built once from its `@inject()`
 * constructor. The container alone would build a fresh instance on every
 * `make()`; services hold state (caches, queues) and must be one per process.
 * Consumers then receive them by type: `constructor(private books: BookService)`.
 */
export function bindSingletons(
  container: Container<ContainerBindings>,
  classes: InjectableClass[]
) {
  for (const Service of classes) {
    container.singleton(Service as any, async (resolver) => {
      const dependencies = Service.containerInjections?._constructor?.dependencies ?? []
      const values = await Promise.all(
        dependencies.map((dependency) => resolver.make(dependency as any))
      )
      return new (Service as unknown as new (...args: unknown[]) => unknown)(...values)
    })
  }
}
