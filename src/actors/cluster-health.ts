/** SESSION_HOST=restate: what this process needs besides itself. */
export interface ClusterHealth {
  restate: { ingress: 'ok' | 'unreachable'; admin: 'ok' | 'unreachable' };
  redis: 'ok' | 'failing';
}

export const clusterHealthy = (health: ClusterHealth): boolean =>
  health.restate.ingress === 'ok' && health.restate.admin === 'ok' && health.redis === 'ok';
