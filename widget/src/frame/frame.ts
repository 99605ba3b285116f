/**
 * `frame.js`: the checkout page inside the sandboxed iframe. It waits for the one connect message from its
 * parent (the overlay), checked by source, shape and the nonce the overlay put in this page's URL fragment,
 * then talks only over the port that message carried. Every other message is ignored.
 */
import '../components/servicepay-frame-app/define.ts';
import { parseConnectMessage, parseHostMessage } from '../protocol/messages.ts';
import { readFrameConfig } from './frame-config.ts';

const config = readFrameConfig(document);
const nonce = location.hash.slice(1);
let port: MessagePort | undefined;

function onWindowMessage(event: MessageEvent): void {
  if (port || event.source !== window.parent || window.parent === window) return;
  const connect = parseConnectMessage(event.data);
  const offered = event.ports[0];
  if (!connect || !offered || nonce === '' || connect.nonce !== nonce || !config) return;
  port = offered;
  window.removeEventListener('message', onWindowMessage);
  // The nonce has done its job; keep it out of anything that reads the URL later.
  history.replaceState(null, '', location.pathname);
  const app = document.createElement('servicepay-frame-app');
  app.config = config;
  app.post = (message) => offered.postMessage(message);
  document.body.append(app);
  let started = false;
  offered.onmessage = (message) => {
    const parsed = parseHostMessage(message.data);
    if (!parsed) return;
    if (parsed.type === 'start' && !started) {
      started = true;
      app.start(parsed.clientSecret);
    } else if (parsed.type === 'close-requested') {
      void app.requestClose();
    }
  };
  offered.postMessage({ type: 'ready' });
}

window.addEventListener('message', onWindowMessage);
