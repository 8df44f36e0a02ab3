/**
 * Node 22 marks `node:sqlite` as experimental and says so on stderr when it loads (Node 24 does
 * not). The store depends on it by design, so the warning tells an operator nothing and would
 * break the one-line start-up errors; every other warning still prints. Imported first by main,
 * which loads the store (and with it node:sqlite) only afterwards, by a dynamic import.
 */
const emitWarning = process.emitWarning.bind(process) as (...args: unknown[]) => void;

process.emitWarning = (warning: string | Error, ...rest: unknown[]) => {
  const text = typeof warning === 'string' ? warning : warning.message;
  if (text.startsWith('SQLite is an experimental feature')) return;
  emitWarning(warning, ...rest);
};
