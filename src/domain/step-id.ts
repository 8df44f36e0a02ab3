/** Older app builds prefixed screen ids (`n_pan_details`, `new_pan_details`); React Native sends `PAN_DETAILS`. */
const LEGACY_PREFIX = /^(?:n|new)_/;

/**
 * The one spelling of a step id every lookup compares: trimmed, lower case, legacy `n_`/`new_`
 * prefix dropped. `isStep` says which ids are real steps where a caller knows them: a prefixed id
 * that is a step itself (a step really named `new_…`) is then kept as it is.
 */
export function normaliseStepId(raw: string, isStep?: (id: string) => boolean): string {
  const id = raw.trim().toLowerCase();
  const unprefixed = id.replace(LEGACY_PREFIX, '');
  if (unprefixed === id || unprefixed === '') return id;
  return isStep?.(id) ? id : unprefixed;
}
