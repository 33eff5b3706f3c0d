/**
 * The verification badge: a small flat SVG (teal "Verified" when the agent holds the role's badge, grey "Not
 * Verified" otherwise) and the HTML / Markdown snippets that embed it. Everything interpolated is escaped;
 * widths come from a per-character estimate (no font metrics on the server).
 */
import type { BadgeRole } from './status-catalog.js'

export const ROLE_LABELS: Record<BadgeRole, string> = {
  'media-buy': 'Media Buy Agent',
  creative: 'Creative Agent',
  signals: 'Signals Agent',
  governance: 'Governance Agent',
  brand: 'Brand Agent',
  'sponsored-intelligence': 'Sponsored Intelligence Agent',
}

const TEAL = '#0f8b8d'
const GREY = '#6b7280'
const DARK = '#1f2937'

/** Escapes text for XML/HTML content and attribute values. */
export const escapeXml = (text: string): string =>
  text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;')

const widthOf = (text: string): number => Math.round(text.length * 6.6 + 14)

/** The alt text / title of a badge. */
export function badgeTitle(role: BadgeRole, verified: boolean, version?: string): string {
  const label = `${ROLE_LABELS[role]}${version ? ` ${version}` : ''}`
  return verified ? `AgenticAdvertising.org Verified ${label}` : `${label}: Not Verified`
}

/**
 * The badge image.
 *
 * @example
 * renderBadgeSvg({ role: 'creative', verified: true, version: '3.1' }) // '<svg xmlns=… Verified · Creative Agent 3.1…'
 */
export function renderBadgeSvg(badge: { role: BadgeRole; verified: boolean; version?: string }): string {
  const left = 'AAO'
  const right = badge.verified
    ? `Verified · ${ROLE_LABELS[badge.role]}${badge.version ? ` ${badge.version}` : ''}`
    : `Not Verified · ${ROLE_LABELS[badge.role]}${badge.version ? ` ${badge.version}` : ''}`
  const leftWidth = widthOf(left)
  const rightWidth = widthOf(right)
  const width = leftWidth + rightWidth
  const title = escapeXml(badgeTitle(badge.role, badge.verified, badge.version))
  const color = badge.verified ? TEAL : GREY
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="20" role="img" aria-label="${title}">`,
    `<title>${title}</title>`,
    `<rect width="${leftWidth}" height="20" fill="${DARK}"/>`,
    `<rect x="${leftWidth}" width="${rightWidth}" height="20" fill="${color}"/>`,
    `<g fill="#ffffff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" text-anchor="middle">`,
    `<text x="${leftWidth / 2}" y="14">${escapeXml(left)}</text>`,
    `<text x="${leftWidth + rightWidth / 2}" y="14">${escapeXml(right)}</text>`,
    `</g>`,
    `</svg>`,
  ].join('')
}

/** The embed snippets for a badge image linking to the agent's registry entry. */
export function embedSnippets(options: {
  svgUrl: string
  registryUrl: string
  role: BadgeRole
  verified: boolean
  version?: string
}): { html: string; markdown: string } {
  const alt = badgeTitle(options.role, options.verified, options.version)
  const markdownText = (text: string) => text.replace(/[[\]\\]/g, (char) => `\\${char}`)
  const markdownUrl = (url: string) =>
    url.replaceAll('(', '%28').replaceAll(')', '%29').replaceAll(' ', '%20')
  return {
    html: `<a href="${escapeXml(options.registryUrl)}"><img src="${escapeXml(options.svgUrl)}" alt="${escapeXml(alt)}" height="20"></a>`,
    markdown: `[![${markdownText(alt)}](${markdownUrl(options.svgUrl)})](${markdownUrl(options.registryUrl)})`,
  }
}
