/**
 * CPU time of processes from /proc/<pid>/stat (Linux): the benches report CPU milliseconds per delivery of
 * the services, the sender workers and their PostgreSQL backends, figures that a busy machine distorts much
 * less than deliveries per second.
 */
import { readdirSync, readFileSync } from 'node:fs'
import pg from 'pg'

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on Linux). */
const TICKS = 100
/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat; undefined off Linux or once gone. */
export function cpuSeconds(pid: number | undefined, thread?: 'main'): number | undefined {
  if (pid === undefined) return undefined
  try {
    const stat = readFileSync(thread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8')
    // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS
  } catch {
    return undefined
  }
}

/** CPU seconds so far of each process (`main`: of its main thread only, the one running its event loop). */
export const cpuOf = (pids: readonly number[], thread?: 'main') =>
  new Map(
    pids.flatMap((pid) =>
      cpuSeconds(pid, thread) === undefined ? [] : [[pid, cpuSeconds(pid, thread)!] as const],
    ),
  )

/** CPU seconds used between two snapshots (a process that appeared in between counts from its start). */
export function cpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0)
  return total
}

/**
 * The PostgreSQL client backends of the database `client` is connected to (process ids), but its own and those
 * in `existing`. Taken before the processes under test connect, then while they run, these are their
 * connections (and those of anyone else connecting meanwhile: run on a database of its own for a clean figure).
 */
export async function clientBackends(
  client: pg.Client,
  existing: ReadonlySet<number> = new Set(),
): Promise<number[]> {
  const { rows } = await client.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
      WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
  )
  return rows.map((row) => row.pid).filter((pid) => !existing.has(pid))
}

/** CPU seconds so far of each thread of `pid`, summed by thread name (/proc/<pid>/task/<tid>/comm). */
export function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>()
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim()
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
        out.set(name, (out.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / TICKS)
      } catch {
        // The thread ended meanwhile.
      }
    }
  } catch {
    // Not Linux, or the process is gone.
  }
  return out
}

/** Bytes a process has written so far through write system calls (/proc/<pid>/io `wchar`: files and sockets). */
export function writtenBytes(pid: number): number | undefined {
  try {
    const match = /^wchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))
    return match ? Number(match[1]) : undefined
  } catch {
    return undefined
  }
}
