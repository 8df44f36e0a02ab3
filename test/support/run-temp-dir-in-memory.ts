import { statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { runTempDir } from './run-temp-dir.js';

/** A memory-backed file system (tmpfs), used where the machine has one with room for a run (about 400 MB). */
const MEMORY_DISK = '/dev/shm';
const MEMORY_DISK_ROOM_BYTES = 2 * 2 ** 30;

/**
 * Vitest global setup for `npm test`: the run's directory on a memory-backed file system when
 * there is one with room. Every SQLite store a test opens syncs its claim, its migrations and its
 * checkpoints to disk; on a virtual disk those syncs were a ninth of the suite's time. What the
 * tests ask of a store, that it keeps what it acknowledged through a kill -9, holds the same way
 * there: a killed process leaves its writes in the kernel's page cache either way, and no test can
 * cut the power.
 */
export default function setup(): () => void {
  return runTempDir(memoryDiskWithRoom() ?? tmpdir());
}

function memoryDiskWithRoom(): string | undefined {
  try {
    const room = statfsSync(MEMORY_DISK);
    return room.bavail * room.bsize >= MEMORY_DISK_ROOM_BYTES ? MEMORY_DISK : undefined;
  } catch {
    // No such file system here (macOS, a container without one).
    return undefined;
  }
}
