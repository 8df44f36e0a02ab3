/**
 * A map in recency order, least recently set first: `set` makes its key the most recent, and a
 * walk from the front reaches the least recent at once however many keys came and went before.
 * A plain Map kept in that order (delete, then set again) leaves a deleted slot at its front for
 * every key that leaves, and each new walk from the front steps over all of them until V8 rebuilds
 * the table: 30 µs a walk at 45,000 sessions (docs/decisions/0042-running-sessions-in-a-linked-order.md).
 */
import type { Node } from 'yallist';
import { Yallist } from 'yallist';

interface Entry<V> {
  readonly key: string;
  readonly value: V;
  /** Rises with each `set`: the order of the list, so a walk can find where it was. */
  readonly seq: number;
}

export class RecencyMap<V> implements ReadonlyMap<string, V> {
  private readonly nodes = new Map<string, Node<Entry<V>>>();
  private readonly order = new Yallist<Entry<V>>();
  private seq = 0;

  get size(): number {
    return this.nodes.size;
  }

  get(key: string): V | undefined {
    return this.nodes.get(key)?.value.value;
  }

  has(key: string): boolean {
    return this.nodes.has(key);
  }

  /** The key with this value, now the most recent. */
  set(key: string, value: V): this {
    const node = this.nodes.get(key);
    if (node) this.order.removeNode(node);
    this.seq += 1;
    this.order.push({ key, value, seq: this.seq });
    this.nodes.set(key, this.order.tail!);
    return this;
  }

  delete(key: string): boolean {
    const node = this.nodes.get(key);
    if (!node) return false;
    this.order.removeNode(node);
    this.nodes.delete(key);
    return true;
  }

  clear(): void {
    for (let node = this.order.head; node; node = this.order.head) this.order.removeNode(node);
    this.nodes.clear();
  }

  /**
   * Least recent first, as a Map walks: the walk may delete or set any key, a key set meanwhile is
   * met again as the most recent, and the walk goes on from where it stood.
   */
  *entries(): MapIterator<[string, V]> {
    for (let node = this.order.head; node;) {
      const next = node.next;
      const { key, value, seq } = node.value;
      yield [key, value];
      if (node.list === this.order) node = node.next;
      // It left (deleted, or set again at the end): what followed it, unless that left too.
      else if (next?.list === this.order) node = next;
      else node = this.firstAfter(seq);
    }
  }

  *keys(): MapIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries();
  }

  forEach(callback: (value: V, key: string, map: ReadonlyMap<string, V>) => void): void {
    for (const [key, value] of this.entries()) callback(value, key, this);
  }

  /** The first entry set after `seq`, found from the end: a walk's callers set few keys while it stands. */
  private firstAfter(seq: number): Node<Entry<V>> | undefined {
    let node = this.order.tail;
    if (!node || node.value.seq <= seq) return undefined;
    while (node.prev && node.prev.value.seq > seq) node = node.prev;
    return node;
  }
}
