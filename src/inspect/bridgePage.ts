/** How long the relay's page waits for the hosted inspector to answer before saying it cannot load. */
export const DEFAULT_INSPECTOR_LOAD_TIMEOUT_MS = 10_000;

/**
 * What the relay's page tells the relay about the hosted inspector it embeds: `loaded` once the
 * inspector listens (it has been given every message so far), `unavailable` when it did not
 * answer in time (no internet, a proxy or firewall in the way). A page may say `loaded` after
 * `unavailable` when the inspector turns up late.
 */
export type InspectorPageReport = 'loaded' | 'unavailable';

/** The message type of a page's report: the relay keeps these to itself (never relayed, never buffered). */
export const PAGE_REPORT_TYPE = '@redflow.page';

/** Escapes text for an HTML attribute or element. */
function html(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/**
 * The relay's page: the same bridge as @statelyai/inspect's relay (an iframe with the hosted
 * inspector, fed what the relay's WebSocket receives), plus what that one lacks: the hosted page
 * needs the internet, so when it has not answered within `loadTimeoutMs` the page says so, and
 * what to do, instead of staying blank; and it reports either way to the relay, so the command
 * can say it too.
 */
export function bridgePage(inspectorUrl: string, loadTimeoutMs: number): string {
  const origin = /^https?:\/\/[^/]+/.exec(inspectorUrl)?.[0] ?? inspectorUrl;
  return `<!DOCTYPE html>
<html>
<head>
  <meta charset="utf-8">
  <title>Redflow – Stately inspector</title>
  <style>
    * { margin: 0; padding: 0; } html, body { height: 100%; } iframe { width: 100%; height: 100%; border: none; }
    #unavailable { display: none; position: fixed; inset: 0; padding: 48px; background: #fff; color: #222; font: 16px/1.5 system-ui, sans-serif; }
    #unavailable h1 { font-size: 22px; margin-bottom: 16px; } #unavailable p { margin-bottom: 12px; max-width: 760px; } #unavailable code { background: #f1f1f1; padding: 1px 4px; }
  </style>
</head>
<body>
  <iframe id="inspector" src="${html(inspectorUrl)}"></iframe>
  <div id="unavailable" role="alert">
    <h1>Cannot load the hosted Stately inspector</h1>
    <p>The Stately inspector is a hosted page: this page embeds <code>${html(inspectorUrl)}</code>, which loads from ${html(origin)}. It did not answer within ${Math.round(loadTimeoutMs / 1000)} s, so this browser probably cannot reach it.</p>
    <p><b>What to do:</b> check this computer's internet access (a proxy or a firewall may block ${html(origin)}), then reload this page while redflow still serves it.</p>
    <p><b>Without internet:</b> use the statechart view of Redflow's own editor: <code>redflow serve</code>, open the run, and step through it with the statechart at the top right. It needs nothing from the internet.</p>
  </div>
  <script>
    // The inspector says "@statelyai.connected" once it listens; until then messages wait here.
    const iframe = document.getElementById('inspector');
    const buffer = [];
    let connected = false;
    let report;
    const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host);
    const tell = (inspector) => {
      report = inspector;
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: '${PAGE_REPORT_TYPE}', inspector }));
    };
    ws.onopen = () => { if (report !== undefined) tell(report); };
    window.addEventListener('message', (e) => {
      if (e.data && e.data.type === '@statelyai.connected') {
        connected = true;
        buffer.forEach((event) => iframe.contentWindow.postMessage(event, '*'));
        buffer.length = 0;
        document.getElementById('unavailable').style.display = 'none';
        tell('loaded');
      }
    });
    // A page that cannot load (offline, blocked) fires no error an embedding page can see: only silence.
    setTimeout(() => {
      if (connected) return;
      document.getElementById('unavailable').style.display = 'block';
      tell('unavailable');
    }, ${loadTimeoutMs});
    ws.onmessage = (event) => {
      const data = JSON.parse(event.data);
      if (connected) iframe.contentWindow.postMessage(data, '*');
      else buffer.push(data);
    };
  </script>
</body>
</html>`;
}
