import { describe, expect, it } from 'vitest';
import { ActivityRing } from '../../src/store/activity-ring.js';
import type { ActivityItem } from '../../src/domain/activity.js';

function ringWith(capacity: number, count: number): ActivityRing {
  const ring = new ActivityRing(capacity);
  for (let id = 1; id <= count; id += 1) {
    const item: ActivityItem = {
      id: String(id),
      kind: 'event',
      timestamp: '',
      session_id: 's',
      user_id: null,
      payload: {},
      trace: { trace_id: 't', request_id: 'r' },
    };
    ring.push(item);
  }
  return ring;
}

const ids = (result: { items: ActivityItem[] }) => result.items.map((item) => item.id);

describe('ActivityRing.after', () => {
  it('gives at most `limit` items after the id, oldest first', () => {
    const ring = ringWith(10, 8);
    expect(ids(ring.after(2, 3))).toEqual(['3', '4', '5']);
    expect(ids(ring.after(6, 3))).toEqual(['7', '8']);
    expect(ids(ring.after(8, 3))).toEqual([]);
    expect(ids(ring.after(2))).toEqual(['3', '4', '5', '6', '7', '8']);
  });

  it('reports a gap when items after the id were overwritten, and starts at the oldest held', () => {
    const ring = ringWith(4, 10);
    expect(ring.after(3, 2)).toMatchObject({ gap: true });
    expect(ids(ring.after(3, 2))).toEqual(['7', '8']);
    expect(ring.after(6, 2)).toMatchObject({ gap: false });
    expect(ids(ring.after(6, 2))).toEqual(['7', '8']);
  });
});
