import { describe, expect, it } from 'vitest';
import { MIN_RELEASED_BYTES, MIN_SLACK_BYTES, MIN_TRIM_INTERVAL_MS, shouldTrim } from '../../src/integrations/heap-trim.js';

const MiB = 2 ** 20;
/** What the budget counted 100,000 hibernated sessions at before they left memory. */
const FLOOD_LEFT = 700 * MiB;

describe('heap trim: when a full collection gives back what a burst left', () => {
  it('collects when the committed heap holds at least 64 MiB free and more free than live', () => {
    // The flood's settled state: 270 MB committed, 63 MB in use.
    expect(shouldTrim({ total_heap_size: 270 * MiB, used_heap_size: 63 * MiB }, MIN_TRIM_INTERVAL_MS, FLOOD_LEFT)).toBe(true);
  });

  it('leaves a busy heap alone: most of it live', () => {
    expect(shouldTrim({ total_heap_size: 400 * MiB, used_heap_size: 300 * MiB }, MIN_TRIM_INTERVAL_MS, FLOOD_LEFT)).toBe(false);
  });

  it('leaves a small heap alone: the free part under 64 MiB is not worth a pause', () => {
    expect(shouldTrim({ total_heap_size: 60 * MiB, used_heap_size: 10 * MiB }, MIN_TRIM_INTERVAL_MS, FLOOD_LEFT)).toBe(false);
    expect(shouldTrim({ total_heap_size: MIN_SLACK_BYTES + 10 * MiB, used_heap_size: 10 * MiB }, MIN_TRIM_INTERVAL_MS, FLOOD_LEFT)).toBe(true);
  });

  it('leaves a service under steady load alone: its heap has room between scavenges, but no sessions left memory', () => {
    expect(shouldTrim({ total_heap_size: 270 * MiB, used_heap_size: 63 * MiB }, MIN_TRIM_INTERVAL_MS, 0)).toBe(false);
    expect(shouldTrim({ total_heap_size: 270 * MiB, used_heap_size: 63 * MiB }, MIN_TRIM_INTERVAL_MS, MIN_RELEASED_BYTES - 1)).toBe(false);
    expect(shouldTrim({ total_heap_size: 270 * MiB, used_heap_size: 63 * MiB }, MIN_TRIM_INTERVAL_MS, MIN_RELEASED_BYTES)).toBe(true);
  });

  it('collects at most once a minute', () => {
    expect(shouldTrim({ total_heap_size: 270 * MiB, used_heap_size: 63 * MiB }, MIN_TRIM_INTERVAL_MS - 1, FLOOD_LEFT)).toBe(false);
  });
});
