/** Deterministic renderers: SVG images and HTML banners drawn from brand colours and offering text. */

export const escapeHtml = (value: string): string =>
  value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  )

/** '#abc' or '#aabbcc' as '#aabbcc' (lower case), or undefined for anything else. */
export function normalizeHex(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const short = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/i.exec(value)
  if (short) return `#${short[1]}${short[1]}${short[2]}${short[2]}${short[3]}${short[3]}`.toLowerCase()
  return /^#[0-9a-f]{6}$/i.test(value) ? value.toLowerCase() : undefined
}

/** Black or white, whichever reads better on `hex` (WCAG relative luminance). */
export function textColourOn(hex: string): string {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
  return luminance > 0.179 ? '#000000' : '#ffffff'
}

/** `text` cut to `max` characters, ending with an ellipsis when cut. */
export function truncate(text: string, max: number | undefined): string {
  if (max === undefined || text.length <= max) return text
  return max <= 1 ? text.slice(0, max) : `${text.slice(0, max - 1).trimEnd()}…`
}

export interface Look {
  primary: string
  secondary: string
  headline: string
  body: string
  cta: string
  brandName: string
}

export const svgDataUrl = (svg: string): string =>
  `data:image/svg+xml;base64,${Buffer.from(svg, 'utf8').toString('base64')}`

/** A banner image: primary-colour field, headline and body, a secondary-colour call-to-action button. */
export function bannerSvg(width: number, height: number, look: Look): string {
  const ink = textColourOn(look.primary)
  const buttonInk = textColourOn(look.secondary)
  const landscape = width / height >= 2.5
  const base = Math.max(8, Math.round(Math.min(height / (landscape ? 3.2 : 9), width / 14)))
  const headline = truncate(
    look.headline,
    Math.max(8, Math.floor((width * (landscape ? 0.55 : 0.9)) / (base * 0.6))),
  )
  const body = truncate(
    look.body,
    Math.max(8, Math.floor((width * (landscape ? 0.55 : 0.9)) / (base * 0.42))),
  )
  const pad = Math.round(Math.min(width, height) * 0.08)
  const buttonWidth = Math.round(
    Math.min(width * (landscape ? 0.25 : 0.6), look.cta.length * base * 0.7 + 2 * pad),
  )
  const buttonHeight = Math.round(base * 1.8)
  const buttonX = landscape ? width - pad - buttonWidth : pad
  const buttonY = landscape ? Math.round((height - buttonHeight) / 2) : height - pad - buttonHeight
  const lines = landscape
    ? [
        `<text x="${pad}" y="${Math.round(height / 2 - base * 0.1)}" font-size="${base}" font-weight="700" fill="${ink}">${escapeHtml(headline)}</text>`,
        `<text x="${pad}" y="${Math.round(height / 2 + base * 0.9)}" font-size="${Math.round(base * 0.7)}" fill="${ink}">${escapeHtml(body)}</text>`,
      ]
    : [
        `<text x="${pad}" y="${pad + base}" font-size="${base}" font-weight="700" fill="${ink}">${escapeHtml(headline)}</text>`,
        `<text x="${pad}" y="${pad + Math.round(base * 2.3)}" font-size="${Math.round(base * 0.7)}" fill="${ink}">${escapeHtml(body)}</text>`,
      ]
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(`${look.brandName}: ${look.headline}`)}">`,
    `<rect width="${width}" height="${height}" fill="${look.primary}"/>`,
    `<rect x="0" y="${height - Math.max(2, Math.round(height * 0.04))}" width="${width}" height="${Math.max(2, Math.round(height * 0.04))}" fill="${look.secondary}"/>`,
    `<g font-family="Helvetica, Arial, sans-serif">`,
    ...lines,
    `<rect x="${buttonX}" y="${buttonY}" width="${buttonWidth}" height="${buttonHeight}" rx="${Math.round(buttonHeight / 4)}" fill="${look.secondary}"/>`,
    `<text x="${buttonX + buttonWidth / 2}" y="${buttonY + Math.round(buttonHeight * 0.65)}" font-size="${Math.round(base * 0.75)}" font-weight="700" text-anchor="middle" fill="${buttonInk}">${escapeHtml(truncate(look.cta, 24))}</text>`,
    `</g></svg>`,
  ].join('')
}

/** A square logo mark: the brand's initial on its primary colour. */
export function logoSvg(size: number, look: Look): string {
  const initial = escapeHtml((look.brandName.trim()[0] ?? '?').toUpperCase())
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${size}" height="${size}" viewBox="0 0 ${size} ${size}" role="img" aria-label="${escapeHtml(look.brandName)}"><rect width="${size}" height="${size}" rx="${Math.round(size / 8)}" fill="${look.primary}"/><text x="${size / 2}" y="${Math.round(size * 0.68)}" font-family="Helvetica, Arial, sans-serif" font-size="${Math.round(size * 0.55)}" font-weight="700" text-anchor="middle" fill="${look.secondary}">${initial}</text></svg>`
}

/** An image fitted (letterboxed) into width x height on `background`: how a transformation resizes an image. */
export function fittedSvg(
  width: number,
  height: number,
  href: string,
  background: string,
  alt: string,
): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(alt)}"><rect width="${width}" height="${height}" fill="${background}"/><image href="${escapeHtml(href)}" xlink:href="${escapeHtml(href)}" x="0" y="0" width="${width}" height="${height}" preserveAspectRatio="xMidYMid meet"/></svg>`
}

/** An HTML5 banner (a complete document) with the brand colours, offering text and a clickthrough. */
export function bannerHtml(
  size: { width: number; height: number } | undefined,
  look: Look,
  clickUrl: string,
  imageUrl?: string,
): string {
  const box = size ? `width:${size.width}px;height:${size.height}px;` : 'width:100%;min-height:90px;'
  const ink = textColourOn(look.primary)
  const buttonInk = textColourOn(look.secondary)
  return [
    '<!doctype html><html lang="en"><head><meta charset="utf-8">',
    `<meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(look.brandName)}</title>`,
    '<style>',
    `html,body{margin:0;padding:0}.ad{${box}box-sizing:border-box;overflow:hidden;display:flex;flex-direction:column;justify-content:center;gap:6px;padding:8px 12px;background:${look.primary};color:${ink};font-family:Helvetica,Arial,sans-serif;text-decoration:none}`,
    `.ad h1{margin:0;font-size:clamp(12px,6vmin,32px);line-height:1.1}.ad p{margin:0;font-size:clamp(10px,4vmin,18px)}.ad img{max-width:100%;max-height:50%;object-fit:contain}`,
    `.ad .cta{align-self:flex-start;padding:4px 10px;border-radius:4px;background:${look.secondary};color:${buttonInk};font-weight:700}`,
    '</style></head><body>',
    `<a class="ad" href="${escapeHtml(clickUrl)}" target="_blank" rel="noopener" aria-label="${escapeHtml(`${look.brandName}: ${look.headline}`)}">`,
    imageUrl ? `<img src="${escapeHtml(imageUrl)}" alt="${escapeHtml(look.headline)}">` : '',
    `<h1>${escapeHtml(look.headline)}</h1><p>${escapeHtml(look.body)}</p><span class="cta">${escapeHtml(look.cta)}</span>`,
    '</a></body></html>',
  ].join('')
}
