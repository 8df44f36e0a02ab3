import { createParser } from '/console/vendor/eventsource-parser/index.js';
import { Unauthorized, authHeaders, detailOf } from './api.js';

const RETRY_MS = 3000;

/**
 * The activity stream read with fetch (an EventSource cannot send X-API-Key). Reconnects after a
 * drop with Last-Event-ID, so no item is lost while the server still holds it; `stop()` ends it and
 * returns the last id seen, which a later `openActivityStream({ afterId })` resumes from.
 */
export function openActivityStream({ afterId, onItem, onReset, onState, onUnauthorized }) {
  let lastId = afterId;
  let controller;
  let stopped = false;
  let retryTimer;

  async function connect() {
    controller = new AbortController();
    const headers = { Accept: 'text/event-stream', ...authHeaders() };
    if (lastId !== undefined) headers['Last-Event-ID'] = String(lastId);
    onState('connecting');
    try {
      const response = await fetch('/api/activity/stream', { headers, signal: controller.signal });
      if (response.status === 401) throw new Unauthorized(await detailOf(response));
      if (!response.ok || !response.body) throw new Error(`${response.status}: ${await detailOf(response)}`);
      onState('live');
      const parser = createParser({
        onEvent(message) {
          if (message.event === 'activity') {
            const item = JSON.parse(message.data);
            lastId = Number(item.id);
            onItem(item);
          } else if (message.event === 'reset') {
            onReset(JSON.parse(message.data));
          }
        },
      });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
      if (!stopped) retry();
    } catch (error) {
      if (stopped) return;
      if (error instanceof Unauthorized) {
        onState('unauthorized');
        onUnauthorized(error);
        return;
      }
      retry();
    }
  }

  function retry() {
    onState('reconnecting');
    retryTimer = setTimeout(connect, RETRY_MS);
  }

  void connect();
  return {
    stop() {
      stopped = true;
      clearTimeout(retryTimer);
      controller?.abort();
      onState('paused');
      return lastId;
    },
  };
}
