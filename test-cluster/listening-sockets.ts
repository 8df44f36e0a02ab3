import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

/** A socket a process listens on: its local address as the kernel shows it, and its port. */
export interface ListeningSocket {
  address: string;
  port: number;
}

/** /proc/net/tcp's address: IPv4 as four little-endian bytes; IPv6 as four little-endian words. */
function addressOf(hex: string): string {
  const bytes = Buffer.from(hex, 'hex');
  if (bytes.length === 4) return [...bytes].reverse().join('.');
  const words = [0, 4, 8, 12].map((at) =>
    bytes
      .subarray(at, at + 4)
      .reverse()
      .toString('hex'),
  );
  return words
    .join('')
    .replace(/(.{4})/g, '$1:')
    .slice(0, -1);
}

/**
 * Every TCP socket a process listens on, from its socket descriptors and the kernel's socket
 * tables: what the kernel has, whatever the process was told to do.
 */
export function listeningSockets(pid: number): ListeningSocket[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // Closed between the listing and the read.
    }
  }
  const found: ListeningSocket[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is field 1 (hex ip:port), st field 3 (0A: listening), inode field 9.
      if (fields[3] !== '0A' || !inodes.has(fields[9] ?? '')) continue;
      const [hexAddress, hexPort] = fields[1]!.split(':');
      found.push({ address: addressOf(hexAddress!), port: Number.parseInt(hexPort!, 16) });
    }
  }
  return found;
}
