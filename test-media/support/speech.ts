import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** 16-bit mono PCM and its sample rate, from the `data` chunk of a WAV file. */
export function pcmOfWav(wav: Buffer): { samples: Int16Array; sampleRate: number } {
  if (wav.toString('ascii', 0, 4) !== 'RIFF' || wav.toString('ascii', 8, 12) !== 'WAVE')
    throw new Error('not a WAV file');
  let sampleRate = 0;
  for (let offset = 12; offset + 8 <= wav.length;) {
    const id = wav.toString('ascii', offset, offset + 4);
    const size = wav.readUInt32LE(offset + 4);
    if (id === 'fmt ') {
      if (
        wav.readUInt16LE(offset + 8) !== 1 ||
        wav.readUInt16LE(offset + 10) !== 1 ||
        wav.readUInt16LE(offset + 22) !== 16
      )
        throw new Error('not 16-bit mono PCM');
      sampleRate = wav.readUInt32LE(offset + 12);
    }
    if (id === 'data') {
      // The header's size is a placeholder when the writer streamed: take what is there.
      const end = Math.min(wav.length, offset + 8 + size);
      const data = wav.subarray(offset + 8, end - ((end - offset - 8) % 2));
      return { samples: new Int16Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length)), sampleRate };
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error('WAV file has no data chunk');
}

/** A phrase spoken by Debian's espeak-ng (in its voice for a language: `hi`, `ta`, ...; English unless told), as 16-bit mono PCM. */
export function speak(phrase: string, voice?: string): { samples: Int16Array; sampleRate: number } {
  const dir = mkdtempSync(join(tmpdir(), 'speech-'));
  try {
    const file = join(dir, 'phrase.wav');
    execFileSync('espeak-ng', [...(voice ? ['-v', voice] : []), '-s', '150', '-w', file, phrase]);
    return pcmOfWav(readFileSync(file));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A phrase spoken by espeak-ng with a voice and speed (words per minute), resampled by sox to
 * `sampleRate`: 16-bit mono PCM. Without dither (`-D`): sox otherwise adds random noise as it
 * resamples, and no two runs of the recogniser's accuracy measure heard the same samples.
 */
export function speakAt(phrase: string, voice: string, speed: number, sampleRate: number): Int16Array {
  const wav = execFileSync('espeak-ng', ['-v', voice, '-s', String(speed), '--stdout'], { input: phrase });
  const raw = execFileSync(
    'sox',
    [
      '-q',
      '-D',
      '-t',
      'wav',
      '-',
      '-t',
      'raw',
      '-r',
      String(sampleRate),
      '-e',
      'signed-integer',
      '-b',
      '16',
      '-c',
      '1',
      '-',
    ],
    {
      input: wav,
    },
  );
  return new Int16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length - (raw.length % 2)));
}
