/**
 * The ids a passing step leaves in the context accumulator without a `context_outputs` entry. 3.1.19 storyboards
 * consume some of them with no producer of their own (delivery_reporting and performance_buy_flow read
 * `$context.media_buy_id` after a create_media_buy without context_outputs; sales-proposal-mode reads
 * `$context.proposal_id`; content-standards `$context.content_standards_id`): the runner captures the id each task
 * answers with under its conventional name. A step's own `context_outputs` are applied after, so they win.
 */
import { resolvePath } from './path.js'

/** task → [context name, response path] pairs. */
const CAPTURES: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  create_media_buy: [['media_buy_id', 'media_buy_id']],
  update_media_buy: [['media_buy_id', 'media_buy_id']],
  get_products: [['proposal_id', 'proposals[0].proposal_id']],
  create_content_standards: [['content_standards_id', 'standards_id']],
}

/**
 * The conventional captures of one passing step's response (only the values present, never empty strings).
 * @example conventionalCaptures('create_media_buy', { media_buy_id: 'mb_1' }) // [['media_buy_id', 'mb_1']]
 */
export function conventionalCaptures(task: string, body: unknown): [string, unknown][] {
  const found: [string, unknown][] = []
  for (const [name, path] of CAPTURES[task] ?? []) {
    const value = resolvePath(body, path)
    if (value !== undefined && value !== null && value !== '') found.push([name, value])
  }
  return found
}
