/**
 * One Restate node's `restate.toml`, for a replicated cluster: the file `npm run cluster -- --restate-nodes 3`
 * runs each of its nodes with, and the one docs/how-to/production.md shows for production (a test compares
 * the two), so the production file is the one that was run.
 */
export interface RestateNodeSettings {
  clusterName: string;
  /** Unique in the cluster. */
  nodeName: string;
  /** Where the other nodes reach this one (node-to-node port), e.g. `http://10.0.1.11:5122/`. */
  advertisedAddress: string;
  /** Where this node listens for the other nodes. */
  bindAddress: string;
  /** Every node's advertised address: where the replicated metadata servers are. */
  metadataAddresses: string[];
  /** Exactly one node of a new cluster provisions it; the others join. */
  autoProvision: boolean;
  /** Copies of the log, the metadata and each partition's state: 2 of 3 nodes tolerates losing one. */
  replication: number;
  partitions: number;
  ingressBindAddress: string;
  adminBindAddress: string;
  /** The request-signing key, the same on every node (docs/how-to/production.md, Request signing). */
  signingKeyFile: string;
  /** An object store for partition snapshots (production); none locally. */
  snapshotsDestination?: string;
  /** RocksDB's memory: a machine running three nodes side by side gives each less than the 2 GiB default. */
  rocksdbMemory?: string;
}

const quoted = (value: string) => JSON.stringify(value);

export function restateNodeToml(node: RestateNodeSettings): string {
  const lines = [
    `cluster-name = ${quoted(node.clusterName)}`,
    `node-name = ${quoted(node.nodeName)}`,
    `advertised-address = ${quoted(node.advertisedAddress)}   # node-to-node, reachable by the other nodes`,
    `bind-address = ${quoted(node.bindAddress)}`,
    `auto-provision = ${node.autoProvision}   # true on exactly one node: it provisions the new cluster once`,
    `default-replication = ${node.replication}   # log, metadata and partitions on 2 nodes: one may be lost`,
    `default-num-partitions = ${node.partitions}`,
    'disable-telemetry = true',
    ...(node.rocksdbMemory ? [`rocksdb-total-memory-size = ${quoted(node.rocksdbMemory)}`] : []),
    '',
    '[metadata-client]',
    'type = "replicated"   # the nodes\' own metadata servers (Raft): no etcd or object store for metadata',
    `addresses = [${node.metadataAddresses.map(quoted).join(', ')}]`,
    '',
    '[bifrost]',
    'default-provider = "replicated"',
    '',
    ...(node.snapshotsDestination
      ? [
          '[worker.snapshots]',
          `destination = ${quoted(node.snapshotsDestination)}`,
          'snapshot-interval-num-records = 100000',
          '',
        ]
      : []),
    '[worker.invoker]',
    `request-identity-private-key-pem-file = ${quoted(node.signingKeyFile)}   # the same key on every node`,
    '',
    '[ingress]',
    `bind-address = ${quoted(node.ingressBindAddress)}   # private network only: every handler is callable here`,
    '',
    '[admin]',
    `bind-address = ${quoted(node.adminBindAddress)}   # private network only: it changes deployments`,
  ];
  return `${lines.join('\n')}\n`;
}

/** The production example of docs/how-to/production.md: the first of three nodes on a private network. */
export function productionExample(): RestateNodeSettings {
  const peers = ['10.0.1.11', '10.0.1.12', '10.0.1.13'];
  return {
    clusterName: 'kyc-cluster',
    nodeName: 'restate-1',
    advertisedAddress: `http://${peers[0]}:5122/`,
    bindAddress: `${peers[0]}:5122`,
    metadataAddresses: peers.map((peer) => `http://${peer}:5122/`),
    autoProvision: true,
    replication: 2,
    partitions: 24,
    ingressBindAddress: `${peers[0]}:8080`,
    adminBindAddress: `${peers[0]}:9070`,
    signingKeyFile: '/etc/restate/restate-identity.pem',
    snapshotsDestination: 's3://kyc-restate-snapshots/cluster',
  };
}
