import { readFile } from 'node:fs/promises'

/** Where a command reads and writes; tests pass their own. */
export interface Io {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  /** Reads a file, or standard input for `-`. */
  readonly read: (path: string) => Promise<Uint8Array>
}

async function readStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** The process's own standard streams and file system. */
export const processIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  read: (path) => (path === '-' ? readStdin() : readFile(path)),
}

/** A command-line mistake: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** Prints one JSON line. */
export const printJson = (io: Io, value: unknown) => io.stdout(`${JSON.stringify(value)}\n`)
