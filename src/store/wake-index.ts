/**
 * Sessions by their next deadline, for the memory store: a binary min-heap with lazy deletion
 * (an entry whose deadline no longer matches the session's is skipped), rebuilt when stale
 * entries outnumber live ones, so its size stays proportional to the sessions held.
 */
export class WakeIndex {
  private heap: { at: number; id: string }[] = [];

  constructor(private readonly current: (id: string) => number | null | undefined) {}

  push(id: string, at: number, live: number): void {
    if (this.heap.length > 2 * live + 1024) this.rebuild();
    this.heap.push({ at, id });
    this.up(this.heap.length - 1);
  }

  /** Removes and returns up to `limit` ids due by `at`, skipping those `skip` says to. */
  takeDue(at: number, limit: number, skip: (id: string) => boolean): string[] {
    const due: string[] = [];
    while (due.length < limit) {
      const top = this.peekValid();
      if (!top || top.at > at) break;
      this.pop();
      if (!skip(top.id)) due.push(top.id);
    }
    return due;
  }

  /** The earliest deadline held. */
  earliest(): number | undefined {
    return this.peekValid()?.at;
  }

  private peekValid(): { at: number; id: string } | undefined {
    while (this.heap.length > 0) {
      const top = this.heap[0]!;
      if (this.current(top.id) === top.at) return top;
      this.pop();
    }
    return undefined;
  }

  private rebuild(): void {
    const seen = new Set<string>();
    const kept = this.heap.filter(
      (entry) => this.current(entry.id) === entry.at && !seen.has(entry.id) && seen.add(entry.id),
    );
    this.heap = [];
    for (const entry of kept) {
      this.heap.push(entry);
      this.up(this.heap.length - 1);
    }
  }

  private pop(): void {
    const last = this.heap.pop()!;
    if (this.heap.length === 0) return;
    this.heap[0] = last;
    this.down(0);
  }

  private up(index: number): void {
    const heap = this.heap;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent]!.at <= heap[index]!.at) break;
      [heap[parent], heap[index]] = [heap[index]!, heap[parent]!];
      index = parent;
    }
  }

  private down(index: number): void {
    const heap = this.heap;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let least = index;
      if (left < heap.length && heap[left]!.at < heap[least]!.at) least = left;
      if (right < heap.length && heap[right]!.at < heap[least]!.at) least = right;
      if (least === index) return;
      [heap[least], heap[index]] = [heap[index]!, heap[least]!];
      index = least;
    }
  }
}
