/** The Stately inspector UI the viewer page embeds; it speaks window.postMessage. */
export const STATELY_INSPECTOR_URL = 'https://stately.ai/inspect';

/**
 * The page an operator opens on the relay: the Stately inspector in a frame, fed with the
 * relay's messages over a WebSocket to the same host and port the page came from (so it works
 * whatever address the relay is reached by). Messages wait until the inspector says it is
 * connected; a dropped relay connection is retried every two seconds, and the relay replays the
 * machines it retains, so a reload or a restart loses nothing that still runs.
 */
export function viewerPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Session machines · Stately inspector</title>
<style>
  html, body { height: 100%; margin: 0; font: 13px system-ui, sans-serif; }
  body { display: flex; flex-direction: column; }
  #status { padding: 4px 8px; background: #1e1e24; color: #c9c9d1; }
  iframe { flex: 1; border: 0; width: 100%; }
</style>
</head>
<body>
<div id="status">connecting to the relay…</div>
<iframe id="inspector" src="${STATELY_INSPECTOR_URL}"></iframe>
<script>
  const frame = document.getElementById('inspector');
  const status = document.getElementById('status');
  const waiting = [];
  const MAX_WAITING = 5000;
  let inspectorReady = false;
  let received = 0;

  window.addEventListener('message', (message) => {
    if (message.source !== frame.contentWindow || !message.data || message.data.type !== '@statelyai.connected') return;
    inspectorReady = true;
    for (const event of waiting.splice(0)) frame.contentWindow.postMessage(event, '*');
  });

  function deliver(event) {
    if (inspectorReady) frame.contentWindow.postMessage(event, '*');
    else if (waiting.push(event) > MAX_WAITING) waiting.shift();
  }

  function connect() {
    const socket = new WebSocket('ws://' + location.host);
    socket.onopen = () => { status.textContent = 'relay connected: ' + location.host; };
    socket.onmessage = (message) => {
      received += 1;
      status.textContent = 'relay connected: ' + location.host + ' · ' + received + ' inspection events';
      try { deliver(JSON.parse(message.data)); } catch { /* not an inspection event */ }
    };
    socket.onclose = () => {
      status.textContent = 'relay unreachable; retrying…';
      setTimeout(connect, 2000);
    };
  }
  connect();
</script>
</body>
</html>
`;
}
