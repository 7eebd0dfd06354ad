/*
|--------------------------------------------------------------------------
| JavaScript entrypoint for running ace commands
|--------------------------------------------------------------------------
|
| ts-node-maintained compiles TypeScript on the fly so that `node ace` works
| without a build step.
*/
import 'ts-node-maintained/register/esm'

await import('./bin/console.js')
