/**
 * Audio rendered from a script: a deterministic WAV (8 kHz, 16-bit PCM, mono) whose melody is derived from the
 * digest of the script and voice text. It is a placeholder rendition (a tone sequence, not speech): it gives an
 * audio format a real, servable asset of the right duration, and a text-to-speech back end can replace
 * {@link renderWav} without changing the manifest shape.
 *
 * The asset is addressed by content: `/generated/audio/{seed}-{duration_ms}.wav`, where `seed` is the first 16
 * hex digits of SHA-256(voice, script). The agent renders the bytes from the name alone, so the URL needs no
 * storage and stays valid as long as the agent runs.
 */
import { createHash } from 'node:crypto'
import type { AssetValue } from './manifest.js'

/** Samples per second of the rendered audio. */
export const AUDIO_SAMPLE_RATE = 8000
/** The longest spot the agent renders (and serves), milliseconds. */
export const MAX_AUDIO_DURATION_MS = 120_000

const HEADER_BYTES = 44
const NAME = /^([0-9a-f]{16})-([1-9][0-9]{0,5})\.wav$/

/** The content seed of a script read in a voice: 16 hex digits. */
export function audioSeed(script: string, voice: string): string {
  return createHash('sha256').update(`${voice}\u0000${script}`, 'utf8').digest('hex').slice(0, 16)
}

/** The size in bytes of the WAV file of a spot lasting `durationMs`. */
export function wavSize(durationMs: number): number {
  return HEADER_BYTES + Math.round((durationMs * AUDIO_SAMPLE_RATE) / 1000) * 2
}

/**
 * The seed and duration named by a generated-audio file name, or undefined when the name is not one (or asks
 * for more than {@link MAX_AUDIO_DURATION_MS}).
 * @example parseAudioName('0123456789abcdef-30000.wav') // { seed: '0123456789abcdef', durationMs: 30000 }
 */
export function parseAudioName(name: string): { seed: string; durationMs: number } | undefined {
  const match = NAME.exec(name)
  if (!match) return undefined
  const durationMs = Number(match[2])
  return durationMs <= MAX_AUDIO_DURATION_MS ? { seed: match[1]!, durationMs } : undefined
}

/** A small deterministic PRNG (mulberry32) over a 32-bit seed. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

/** A major pentatonic scale, in semitones above the root. */
const SCALE = [0, 2, 4, 7, 9, 12, 14, 16]

/**
 * The WAV bytes of a spot: notes of a pentatonic scale picked by the seed, each with a short attack and
 * release, faded in and out. The same seed and duration always give the same bytes.
 * @example renderWav('0123456789abcdef', 1000).length // 16044
 */
export function renderWav(seed: string, durationMs: number): Buffer {
  const samples = Math.round((durationMs * AUDIO_SAMPLE_RATE) / 1000)
  const buffer = Buffer.alloc(HEADER_BYTES + samples * 2)
  buffer.write('RIFF', 0, 'ascii')
  buffer.writeUInt32LE(buffer.length - 8, 4)
  buffer.write('WAVE', 8, 'ascii')
  buffer.write('fmt ', 12, 'ascii')
  buffer.writeUInt32LE(16, 16)
  buffer.writeUInt16LE(1, 20) // PCM
  buffer.writeUInt16LE(1, 22) // mono
  buffer.writeUInt32LE(AUDIO_SAMPLE_RATE, 24)
  buffer.writeUInt32LE(AUDIO_SAMPLE_RATE * 2, 28)
  buffer.writeUInt16LE(2, 32)
  buffer.writeUInt16LE(16, 34)
  buffer.write('data', 36, 'ascii')
  buffer.writeUInt32LE(samples * 2, 40)

  const next = random(parseInt(seed.slice(0, 8), 16) ^ parseInt(seed.slice(8, 16), 16))
  const root = 196 * 2 ** (Math.floor(next() * 7) / 12)
  const fade = Math.min(samples / 2, AUDIO_SAMPLE_RATE / 2)
  const ramp = AUDIO_SAMPLE_RATE / 100
  let index = 0
  while (index < samples) {
    const length = Math.min(
      samples - index,
      Math.round(AUDIO_SAMPLE_RATE * (0.2 + 0.1 * Math.floor(next() * 4))),
    )
    const rest = next() < 0.15
    const frequency = root * 2 ** (SCALE[Math.floor(next() * SCALE.length)]! / 12)
    for (let i = 0; i < length; i += 1) {
      const at = index + i
      const envelope =
        Math.min(1, i / ramp, (length - i) / ramp) * Math.min(1, at / fade, (samples - at) / fade)
      const tone = Math.sin((2 * Math.PI * frequency * i) / AUDIO_SAMPLE_RATE)
      const value = rest ? 0 : Math.round(tone * envelope * 0.3 * 32767)
      buffer.writeInt16LE(value, HEADER_BYTES + at * 2)
    }
    index += length
  }
  return buffer
}

/**
 * The audio asset of a spot rendered from `script` in `voice`, hosted by the agent at `agentUrl`.
 * @example renderedAudioAsset('https://creative.example', 'Built for the trail.', 'narrator-warm', 30_000).url
 * // 'https://creative.example/generated/audio/<seed>-30000.wav'
 */
export function renderedAudioAsset(
  agentUrl: string,
  script: string,
  voice: string,
  durationMs: number,
): AssetValue {
  const seed = audioSeed(script, voice)
  return {
    asset_type: 'audio',
    url: `${agentUrl.replace(/\/+$/, '')}/generated/audio/${seed}-${durationMs}.wav`,
    duration_ms: durationMs,
    file_size_bytes: wavSize(durationMs),
    container_format: 'wav',
    codec: 'pcm',
    sampling_rate_hz: AUDIO_SAMPLE_RATE,
    channels: 'mono',
    bit_depth: 16,
    bitrate_kbps: (AUDIO_SAMPLE_RATE * 16) / 1000,
  }
}
