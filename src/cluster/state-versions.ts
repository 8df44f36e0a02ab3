/**
 * The state a session object keeps in Restate outlives the release that wrote it: a wake delayed
 * by one release runs on the next. So the kept state carries the version of its shape (in the
 * `session` value, `state_version`; none is version 1, every state written before versions were
 * kept), and a release that reads an older one migrates it, step by step, the way the SQLite
 * store's schema is (src/store/migrations.ts). docs/how-to/production.md, Upgrades, says how a release
 * with a new step is rolled out.
 */

/** Every key the object keeps, as some release wrote it. */
export type KeptState = Record<string, unknown>;

/**
 * One step: the state as version n+1 keeps it, from version n's. It may add, change or drop
 * keys. A released step is never edited: a change is a new step.
 */
export type StateMigration = (state: KeptState) => KeptState;

/**
 * Version 2: the deadlines with a wake scheduled are kept in the `session` value (as `wakes`), not
 * under a key of their own, so an invocation reads one key, not two
 * (docs/decisions/0040-events-batched-per-session.md). A `wakes` key with no session goes: a wake
 * finds nothing to run then.
 */
const wakesInTheSession: StateMigration = ({ wakes, ...rest }) => {
  const { session } = rest;
  if (!session || typeof session !== 'object' || !Array.isArray(wakes) || wakes.length === 0) return rest;
  return { ...rest, session: { ...session, wakes } };
};

/** `migrations[0]` takes version 1 to 2, and so on. This release writes version 2. */
export const STATE_MIGRATIONS: readonly StateMigration[] = [wakesInTheSession];

/** The version a release with these steps writes. */
export const stateVersionOf = (migrations: readonly StateMigration[]): number => migrations.length + 1;

/** The version of the shape a kept `session` value was written in. */
export function keptVersion(session: unknown): number {
  const version = (session as { state_version?: unknown } | null)?.state_version;
  return typeof version === 'number' && Number.isInteger(version) && version >= 1 ? version : 1;
}

/** Kept state written by a release newer than this one: this release cannot know its shape. */
export class NewerStateError extends Error {
  constructor(found: number, known: number) {
    super(
      `the session's kept state is version ${found}, newer than this release's ${known}: a newer release's deployment must run it`,
    );
  }
}

/** The state in this release's shape, its `session` marked with the version; the state as it was when already current. */
export function migrateKept(state: KeptState, migrations: readonly StateMigration[]): KeptState {
  const from = keptVersion(state.session);
  const to = stateVersionOf(migrations);
  if (from > to) throw new NewerStateError(from, to);
  let migrated = state;
  for (let version = from; version < to; version += 1) migrated = migrations[version - 1]!(migrated);
  const session = migrated.session;
  return session && typeof session === 'object'
    ? { ...migrated, session: { ...session, state_version: to } }
    : migrated;
}
