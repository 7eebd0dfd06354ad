import { configApp } from '@adonisjs/eslint-config'

export default configApp({
  ignores: ['build/**', 'data/**', 'tmp/**', 'node_modules/**', 'public/**'],
})
