import { describe, expect, it } from 'vitest';
import type { StateMigration } from '../../src/cluster/state-versions.js';
import {
  keptVersion,
  migrateKept,
  NewerStateError,
  STATE_MIGRATIONS,
  stateVersionOf,
} from '../../src/cluster/state-versions.js';

const kept = (version?: number) => ({
  session: { session_id: 's', value: 'idle', ...(version === undefined ? {} : { state_version: version }) },
  summary: { row: { session_id: 's' } },
  wakes: [1000],
});

/** A step renaming `wakes` to `timers`, and one recording in a new key which steps ran. */
const renameWakes: StateMigration = ({ wakes, ...rest }) => ({ ...rest, timers: wakes });
const stamp: StateMigration = (state) => ({
  ...state,
  steps: [...((state.steps as string[] | undefined) ?? []), 'stamp'],
});

describe('the versions of the state a session object keeps in Restate', () => {
  it('a state written before versions were kept is version 1; this release writes the version its steps lead to', () => {
    expect(keptVersion(kept().session)).toBe(1);
    expect(keptVersion({ state_version: 'x' })).toBe(1);
    expect(keptVersion(kept(3).session)).toBe(3);
    expect(stateVersionOf(STATE_MIGRATIONS)).toBe(STATE_MIGRATIONS.length + 1);
  });

  it('runs each step from the kept version on, in order, once, and marks the session with the new version', () => {
    const migrated = migrateKept(kept(), [renameWakes, stamp]);
    expect(migrated).toEqual({
      session: { ...kept().session, state_version: 3 },
      summary: kept().summary,
      timers: [1000],
      steps: ['stamp'],
    });
    // From version 2 only the second step runs: the rename is not applied again.
    const fromTwo = migrateKept({ ...kept(2), timers: [5] }, [renameWakes, stamp]);
    expect(fromTwo).toEqual({
      session: { ...kept().session, state_version: 3 },
      summary: kept().summary,
      wakes: [1000],
      timers: [5],
      steps: ['stamp'],
    });
    // Already current: nothing runs.
    expect(migrateKept(migrated, [renameWakes, stamp])).toEqual(migrated);
  });

  it('refuses a state written by a newer release: this one cannot know its shape', () => {
    expect(() => migrateKept(kept(3), [renameWakes])).toThrow(NewerStateError);
    expect(() => migrateKept(kept(3), [renameWakes])).toThrow('version 3, newer than this release');
  });

  it('version 2 keeps the scheduled wakes inside the session value, and drops a wakes key with no session', () => {
    expect(migrateKept(kept(), STATE_MIGRATIONS.slice(0, 1))).toEqual({
      session: { ...kept().session, wakes: [1000], state_version: 2 },
      summary: kept().summary,
    });
    expect(migrateKept({ ...kept(), wakes: [] }, STATE_MIGRATIONS.slice(0, 1))).toEqual({
      session: { ...kept().session, state_version: 2 },
      summary: kept().summary,
    });
    expect(migrateKept({ wakes: [5] }, STATE_MIGRATIONS.slice(0, 1))).toEqual({});
  });
});
