import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RecencyMap } from '../../src/domain/recency-map.js';

/** The order the supervisor kept with a plain Map: a key set again is deleted and set, so it goes last. */
class MapModel {
  readonly map = new Map<string, number>();
  set(key: string, value: number): void {
    this.map.delete(key);
    this.map.set(key, value);
  }
}

const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h');
const step = fc.oneof(
  fc.record({ op: fc.constant('set' as const), key, value: fc.integer() }),
  fc.record({ op: fc.constant('delete' as const), key }),
);

describe('RecencyMap: a map in recency order', () => {
  it('holds what a Map does, in the order a Map kept by delete-then-set does', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 80 }), (steps) => {
        const map = new RecencyMap<number>();
        const model = new MapModel();
        for (const s of steps) {
          if (s.op === 'set') {
            map.set(s.key, s.value);
            model.set(s.key, s.value);
          } else expect(map.delete(s.key)).toBe(model.map.delete(s.key));
          expect([...map]).toEqual([...model.map]);
          expect(map.size).toBe(model.map.size);
        }
        for (const k of ['a', 'e', 'z']) {
          expect(map.has(k)).toBe(model.map.has(k));
          expect(map.get(k)).toBe(model.map.get(k));
        }
        expect([...map.keys()]).toEqual([...model.map.keys()]);
        expect([...map.values()]).toEqual([...model.map.values()]);
      }),
    );
  });

  it('a walk that deletes or sets keys, the one it stands on or the newest, meets the others as a Map walk does', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(key, { minLength: 1 }),
        fc.array(fc.constantFrom('keep', 'delete', 'touch', 'add', 'drop-newest'), { minLength: 1, maxLength: 30 }),
        (keys, acts) => {
          const map = new RecencyMap<number>();
          const model = new MapModel();
          for (const [n, k] of keys.entries()) {
            map.set(k, n);
            model.set(k, n);
          }
          const walk = (
            target: { set(k: string, v: number): void; delete(k: string): boolean; newest(): string | undefined },
            entries: Iterable<[string, number]>,
          ) => {
            const met: string[] = [];
            let n = 0;
            for (const [k, v] of entries) {
              met.push(k);
              const act = acts[n % acts.length];
              n += 1;
              if (n > 40) break;
              if (act === 'delete') target.delete(k);
              else if (act === 'touch') target.set(k, v + 100);
              else if (act === 'add') target.set(`${k}${n}`, n);
              else if (act === 'drop-newest') target.delete(target.newest() ?? k);
            }
            return met;
          };
          const met = walk(
            { set: (k, v) => map.set(k, v), delete: (k) => map.delete(k), newest: () => [...map.keys()].at(-1) },
            map,
          );
          const modelMet = walk(
            {
              set: (k, v) => model.set(k, v),
              delete: (k) => model.map.delete(k),
              newest: () => [...model.map.keys()].at(-1),
            },
            model.map,
          );
          expect(met).toEqual(modelMet);
          expect([...map]).toEqual([...model.map]);
        },
      ),
    );
  });

  it('clear empties it, and it is used again from empty', () => {
    const map = new RecencyMap<number>();
    map.set('a', 1).set('b', 2);
    map.clear();
    expect([map.size, [...map]]).toEqual([0, []]);
    map.set('c', 3);
    expect([...map]).toEqual([['c', 3]]);
  });
});
