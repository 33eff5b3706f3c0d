// Run by scripts/pack-check.mjs in a fresh project where the packed tarballs are installed: the data ships in the
// tarball, every file its manifest lists and unchanged, and the readers find it where the package is installed.
import { existsSync } from 'node:fs'
import path from 'node:path'
import {
  ADCP_VERSION,
  adcpDataRoot,
  complianceDir,
  listSchemaFiles,
  readSchema,
  registryOpenApiFile,
  verifyAdcpData,
} from '@adwire/adcp-data'

const problems = []
const check = verifyAdcpData()
if (check.changed.length + check.missing.length + check.unlisted.length > 0)
  problems.push(`the data differs from its manifest: ${JSON.stringify(check).slice(0, 400)}`)
if (!adcpDataRoot.includes('node_modules'))
  problems.push(`the data is read from ${adcpDataRoot}, not the install`)
const files = listSchemaFiles()
if (files.length < 600) problems.push(`only ${files.length} schema files`)
const id = readSchema('media-buy/create-media-buy-request.json').$id
if (id !== `/schemas/${ADCP_VERSION}/media-buy/create-media-buy-request.json`)
  problems.push(`unexpected $id ${id}`)
for (const file of [path.join(complianceDir, 'universal', 'capability-discovery.yaml'), registryOpenApiFile])
  if (!file.startsWith(adcpDataRoot) || !existsSync(file))
    problems.push(`${file} is not in the installed data`)
if (problems.length > 0) {
  for (const problem of problems) console.error(problem)
  process.exit(1)
}
console.log(`@adwire/adcp-data: ${check.checked} files as the manifest lists them, ${files.length} schemas`)
