/** A setting that cannot be used: start-up stops with its message, one line naming the setting. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** `invalid configuration: <problem>`, the form every refused setting takes. */
export const invalidConfiguration = (problem: string): ConfigError =>
  new ConfigError(`invalid configuration: ${problem}`);
