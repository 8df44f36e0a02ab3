/** The ETag of a resource whose version is a content hash. */
export const quotedEtag = (version: string): string => `"${version}"`;

/**
 * Whether If-None-Match names the current version (RFC 9110 13.1.2: weak comparison, `*` matches
 * any current representation). The bare version is accepted too: SDKs echo `metadata.version`.
 */
export function ifNoneMatchHits(header: string | undefined, version: string): boolean {
  if (!header) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, '');
    return tag === '*' || tag === quotedEtag(version) || tag === version;
  });
}
