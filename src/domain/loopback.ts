/** Host names and addresses that only this machine can reach. */
const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|\[::1\]|localhost)$/i;

/** A HOST setting (or a Host header's name) that binds or names loopback only. */
export const isLoopbackHost = (host: string): boolean => LOOPBACK_HOST.test(host);

/** A peer address on loopback, IPv4-mapped IPv6 included (`::ffff:127.0.0.1`, what Node reports on a dual-stack socket). */
export const isLoopbackAddress = (address: string | undefined): boolean =>
  address !== undefined && isLoopbackHost(address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address);
