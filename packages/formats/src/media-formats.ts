/** The standard video, audio and digital out-of-home formats. */
import {
  AUDIO_MACROS,
  DOOH_MACROS,
  VIDEO_MACROS,
  clickUrl,
  fixed,
  fixedImage,
  impressionTracker,
  slot,
  type Spec,
} from './format-spec.js'

const VIDEO_SPECS: readonly (readonly [string, string, number, number, number | undefined])[] = [
  ['video_16x9_15s', 'Video 16:9 15s', 1920, 1080, 15_000],
  ['video_16x9_30s', 'Video 16:9 30s', 1920, 1080, 30_000],
  ['video_16x9_6s_bumper', 'Video 16:9 6s Bumper', 1920, 1080, 6_000],
  ['video_720p', 'Video 1280x720', 1280, 720, undefined],
  ['video_vertical_9x16', 'Video Vertical 9:16', 1080, 1920, undefined],
  ['video_square_1x1', 'Video Square 1:1', 1080, 1080, undefined],
  ['video_ctv_30s', 'CTV Video 30s', 1920, 1080, 30_000],
]

/** The video, audio and DOOH formats, in list order. */
export function mediaSpecs(): Spec[] {
  const out: Spec[] = []
  for (const [id, name, width, height, duration] of VIDEO_SPECS) {
    const aspect = width === height ? '1:1' : width > height ? '16:9' : '9:16'
    out.push({
      id,
      name,
      type: 'video',
      description: `A hosted ${width}x${height} (${aspect}) video${duration ? ` of up to ${duration / 1000}s` : ''} with a clickthrough URL.`,
      renders: fixed(width, height),
      assets: [
        slot('video', 'video', true, {
          asset_role: 'hero_video',
          requirements: {
            min_width: width,
            max_width: width,
            min_height: height,
            max_height: height,
            aspect_ratio: aspect,
            ...(duration ? { max_duration_ms: duration } : {}),
            containers: ['mp4', 'webm'],
            codecs: ['h264', 'vp9'],
          },
        }),
        clickUrl(false),
        impressionTracker(),
      ],
      macros: VIDEO_MACROS,
    })
  }
  out.push({
    id: 'video_vast_30s',
    name: 'Video VAST 30s',
    type: 'video',
    description: 'A VAST 4.x tag for an in-stream video of up to 30s.',
    renders: fixed(1920, 1080),
    assets: [slot('vast', 'vast', true, { requirements: { vast_version: '4.2' } })],
    macros: VIDEO_MACROS,
  })
  for (const seconds of [15, 30, 60]) {
    out.push({
      id: `audio_${seconds}s`,
      name: `Audio ${seconds}s Spot`,
      type: 'audio',
      description: `A ${seconds}-second hosted audio spot with an optional companion banner. Without an audio asset, build_creative renders the spot from the script (and voice) text.`,
      assets: [
        slot('audio', 'audio', true, {
          asset_role: 'audio_spot',
          asset_group_id: 'audio',
          requirements: {
            min_duration_ms: seconds * 1000 - 500,
            max_duration_ms: seconds * 1000 + 500,
            formats: ['mp3', 'aac', 'wav'],
            channels: ['mono', 'stereo'],
          },
        }),
        slot('script', 'text', false, {
          asset_role: 'voiceover_script',
          asset_group_id: 'script',
          requirements: { max_length: 800 },
        }),
        slot('voice', 'text', false, {
          asset_role: 'voice',
          asset_group_id: 'voice_id',
          requirements: { max_length: 64 },
        }),
        fixedImage('companion_image', 640, 640, false),
        clickUrl(false),
      ],
      macros: AUDIO_MACROS,
    })
  }
  out.push({
    id: 'audio_daast_30s',
    name: 'Audio DAAST 30s',
    type: 'audio',
    description: 'A DAAST tag for a streaming audio spot of up to 30s.',
    assets: [slot('daast', 'daast', true)],
    macros: AUDIO_MACROS,
  })
  for (const [id, name, width, height] of [
    ['dooh_landscape_1920x1080', 'DOOH Landscape Screen 1920x1080', 1920, 1080],
    ['dooh_portrait_1080x1920', 'DOOH Portrait Screen 1080x1920', 1080, 1920],
    ['dooh_billboard_1400x400', 'DOOH Digital Billboard 1400x400', 1400, 400],
  ] as const) {
    out.push({
      id,
      name,
      type: 'dooh',
      description: `A static ${width}x${height} image for a digital out-of-home screen (no clickthrough).`,
      renders: fixed(width, height),
      assets: [fixedImage('image', width, height)],
      macros: DOOH_MACROS,
      extra: { delivery: { loop_duration_ms: 10_000, dwell_time_ms: 8_000 } },
    })
  }
  out.push({
    id: 'dooh_video_landscape_15s',
    name: 'DOOH Landscape Video 15s',
    type: 'dooh',
    description: 'A silent 15-second 1920x1080 video for digital out-of-home screens.',
    renders: fixed(1920, 1080),
    assets: [
      slot('video', 'video', true, {
        requirements: {
          min_width: 1920,
          max_width: 1920,
          min_height: 1080,
          max_height: 1080,
          max_duration_ms: 15_000,
        },
      }),
    ],
    macros: DOOH_MACROS,
  })
  return out
}
