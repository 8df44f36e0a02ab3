/** SESSION_HOST=restate: what this process needs besides itself. */
export interface ClusterHealth {
  restate: { ingress: 'ok' | 'unreachable'; admin: 'ok' | 'unreachable' };
  redis: 'ok' | 'failing';
  /**
   * Whether Redis answered a PING just now on a connection that is up. `redis` also says `failing`
   * after a write failed until one succeeds; readiness follows this instead, so a process taken out
   * of rotation (no writes) comes back as soon as Redis answers.
   */
  redis_answers: boolean;
}

export const clusterHealthy = (health: ClusterHealth): boolean =>
  health.restate.ingress === 'ok' && health.restate.admin === 'ok' && health.redis === 'ok';
