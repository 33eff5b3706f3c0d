/**
 * A2A CancelTask on a Task that answered an AdCP `submitted`, with the official A2A client: the `cancelTask`
 * option gets the AdCP task_id and the authenticated caller, and the Task reads TASK_STATE_CANCELED (GetTask
 * too); a second cancel returns the canceled Task without asking again; another caller's task is not found, an
 * AdCP task that ended otherwise is not cancelable, nor is a Task that answered synchronously. The session
 * handlers see (`context.contextId`) is the A2A contextId, or the `context_id` the input names.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- loose JSON access in assertions */
import { Role, TaskState, type Part, type Task } from '@a2a-js/sdk'
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
  type Client,
} from '@a2a-js/sdk/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { ADCP_A2A_EXTENSION } from './a2a.js'
import { defineTask } from './define-task.js'
import {
  BUYER_TOKEN,
  READER_TOKEN,
  demoTasks,
  startAgent,
  tokens,
  type RunningAgent,
} from './testing/support.js'
import type { TaskCancelOutcome, TaskCancelRequest } from './types.js'

/** The AdCP tasks the handler opened, by id: their status and the session they were opened in. */
const opened = new Map<string, { status: string; owner: string; session: string | undefined }>()
const cancels: TaskCancelRequest[] = []

const reviewThing = defineTask({
  name: 'get_creative_delivery',
  description: 'Answers submitted; the task waits',
  input: z.looseObject({ end: z.string().optional() }),
  output: z.looseObject({}),
  access: { resource: 'creatives', permission: 'read' },
  handler: (input, context) => {
    const taskId = `task_${crypto.randomUUID()}`
    opened.set(taskId, {
      status: input.end ?? 'submitted',
      owner: context.principal!.principal_id,
      session: context.contextId,
    })
    return { status: 'submitted', task_id: taskId, context_id: context.contextId } as const
  },
})

let agent: RunningAgent

beforeAll(async () => {
  agent = await startAgent({
    tasks: [...demoTasks, reviewThing],
    auth: { tokens },
    cancelTask: async (request): Promise<TaskCancelOutcome> => {
      cancels.push(request)
      const task = opened.get(request.taskId)
      if (!task || task.owner !== request.principal?.principal_id) return 'unknown'
      if (task.status !== 'submitted' && task.status !== 'canceled') return 'terminal'
      task.status = 'canceled'
      return 'canceled'
    },
  })
})
afterAll(() => agent.close())

async function connect(token: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set('authorization', `Bearer ${token}`)
    return fetch(input, { ...init, headers })
  }
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  )
  return factory.createFromUrl(agent.origin)
}

const data = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: '',
})
const activated = { serviceParameters: ServiceParameters.create(withA2AExtensions(ADCP_A2A_EXTENSION)) }

async function invoke(skill: string, input: Record<string, unknown>, contextId = ''): Promise<Task> {
  const client = await connect(BUYER_TOKEN)
  const result = await client.sendMessage(
    {
      tenant: '',
      message: {
        messageId: crypto.randomUUID(),
        contextId,
        taskId: '',
        role: Role.ROLE_USER,
        parts: [data({ skill, input })],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: undefined,
      metadata: undefined,
    },
    activated,
  )
  return result as Task
}

const answer = (task: Task) => task.artifacts[0]?.parts[0]?.content?.value as Record<string, any>
const cancel = async (id: string, token = BUYER_TOKEN) =>
  (await connect(token)).cancelTask({ tenant: '', id, metadata: undefined }, activated)

describe('A2A CancelTask on an AdCP async answer', () => {
  it('cancels the AdCP task the Task answered, once, and the Task reads canceled', async () => {
    const task = await invoke('get_creative_delivery', {})
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const taskId = answer(task).task_id as string
    const canceled = await cancel(task.id)
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    expect(canceled.status?.message?.parts[0]?.content?.$case).toBe('text')
    expect(cancels.at(-1)).toMatchObject({ taskId, principal: { principal_id: 'buyer-1' } })
    expect(opened.get(taskId)?.status).toBe('canceled')
    const read = await (await connect(BUYER_TOKEN)).getTask({ tenant: '', id: task.id, historyLength: 0 })
    expect(read.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    // Canceled already: the Task as it is, the option not asked again.
    const asked = cancels.length
    expect((await cancel(task.id)).status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    expect(cancels.length).toBe(asked)
  })

  it("refuses another caller's task (not found), an ended one (not cancelable) and a synchronous answer", async () => {
    const theirs = await invoke('get_creative_delivery', {})
    await expect(cancel(theirs.id, READER_TOKEN)).rejects.toThrow(/not found/i)
    expect(opened.get(answer(theirs).task_id)?.status).toBe('submitted')
    const ended = await invoke('get_creative_delivery', { end: 'completed' })
    await expect(cancel(ended.id)).rejects.toThrow(/not cancelable/i)
    const formats = await invoke('list_creative_formats', {})
    const asked = cancels.length
    await expect(cancel(formats.id)).rejects.toThrow(/not cancelable/i)
    expect(cancels.length).toBe(asked)
  })

  it("gives handlers the session: the message's contextId, or the context_id the input names", async () => {
    const first = await invoke('get_creative_delivery', {})
    expect(answer(first).context_id).toBe(first.contextId)
    expect(opened.get(answer(first).task_id)?.session).toBe(first.contextId)
    const followUp = await invoke('get_creative_delivery', {}, first.contextId)
    expect(followUp.contextId).toBe(first.contextId)
    expect(answer(followUp).context_id).toBe(first.contextId)
    const named = await invoke('get_creative_delivery', { context_id: 'ctx_named' })
    expect(answer(named).context_id).toBe('ctx_named')
  })
})
