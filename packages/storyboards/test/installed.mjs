// Run by scripts/pack-check.mjs in a fresh project where the packed tarballs are installed: with no bundle
// directory given, the runner loads the official 3.1.19 bundle and its JSON Schemas from the installed
// @adwire/adcp-data, not from a repository checkout, and validates against them.
import { realpathSync } from 'node:fs'
import { complianceDir } from '@adwire/adcp-data'
import { ADCP_VERSION, createSchemaValidator, defaultBundleDir, loadBundle } from '@adwire/storyboards'

const problems = []
const project = realpathSync(process.cwd())
const bundle = loadBundle()
const inProject = (dir) => dir !== undefined && realpathSync(dir).startsWith(`${project}/node_modules/`)
if (defaultBundleDir() !== complianceDir) problems.push(`the default bundle is ${defaultBundleDir()}`)
if (!inProject(bundle.dir)) problems.push(`the bundle is read from ${bundle.dir}, not the install`)
if (!inProject(bundle.schemasDir))
  problems.push(`the schemas are read from ${bundle.schemasDir}, not the install`)
if (bundle.version !== ADCP_VERSION) problems.push(`bundle version ${bundle.version}`)
if (bundle.entries.length < 100) problems.push(`only ${bundle.entries.length} storyboards`)
if (bundle.get('capability_discovery').storyboard.phases[0]?.steps[0]?.task !== 'get_adcp_capabilities')
  problems.push('capability_discovery does not start with get_adcp_capabilities')
if (bundle.testKits.size === 0) problems.push('no test kits')

const schemas = createSchemaValidator(bundle.schemasDir, bundle.version)
const request = 'media-buy/get-products-request.json'
const valid = schemas.errors(request, { buying_mode: 'brief', brief: 'outdoor in Paris' })
const invalid = schemas.errors(request, { buying_mode: 'nonsense' })
if (valid.length > 0) problems.push(`a valid ${request} fails: ${valid.join('; ')}`)
if (invalid.length === 0) problems.push(`an invalid ${request} passes`)

if (problems.length > 0) {
  for (const problem of problems) console.error(problem)
  process.exit(1)
}
console.log(
  `@adwire/storyboards: ${bundle.entries.length} storyboards and the ${bundle.version} schemas from the installed @adwire/adcp-data`,
)
