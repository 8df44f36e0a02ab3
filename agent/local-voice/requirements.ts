import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentSettings } from '../settings.js';

/**
 * What the local voice needs on the machine, checked before the worker registers: a missing
 * program would otherwise show only when the first caller gets silence. Each problem names the
 * Debian package that brings it (`.ci/run` and the README install them).
 */
export function localVoiceProblems(settings: AgentSettings): string[] {
  const problems: string[] = [];
  const missing = (program: string) =>
    spawnSync(program, ['--help'], { stdio: 'ignore', timeout: 5_000 }).error !== undefined;
  if (settings.tts.provider === 'local') {
    if (missing('espeak-ng')) problems.push('TTS_PROVIDER=local needs espeak-ng (apt-get install espeak-ng)');
    if (missing('sox')) problems.push('TTS_PROVIDER=local needs sox (apt-get install sox)');
  }
  if (settings.stt.provider === 'local') {
    if (missing('pocketsphinx_continuous'))
      problems.push('STT_PROVIDER=local needs pocketsphinx_continuous (apt-get install pocketsphinx)');
    if (
      !existsSync(join(settings.stt.modelDir, 'en-us', 'mdef')) ||
      !existsSync(join(settings.stt.modelDir, 'cmudict-en-us.dict'))
    ) {
      const fix = 'apt-get install pocketsphinx-en-us, or set POCKETSPHINX_MODEL_DIR';
      problems.push(`STT_PROVIDER=local needs the US-English model in ${settings.stt.modelDir} (${fix})`);
    }
  }
  return problems;
}
