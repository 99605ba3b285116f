/**
 * `frame.js`: the checkout page inside the sandboxed iframe. It says hello to its parent (the overlay) at the
 * origin the overlay put in this page's URL fragment, waits for the one connect message back, checked by
 * source, origin (that same one), shape and the nonce from the same fragment, then talks only over the port
 * that message carried.
 * Every other message is ignored.
 */
import '../components/servicepay-frame-app/define.ts';
import { type HelloMessage, parseConnectMessage, parseHostMessage } from '../protocol/messages.ts';
import { readFrameConfig } from './frame-config.ts';

const config = readFrameConfig(document);
const fragment = new URLSearchParams(location.hash.slice(1));
const nonce = fragment.get('n') ?? '';
const parentOrigin = fragment.get('o') ?? '';
let port: MessagePort | undefined;

function onWindowMessage(event: MessageEvent): void {
  if (port || event.source !== window.parent || window.parent === window || event.origin !== parentOrigin)
    return;
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
// Say hello to the overlay at once (not at `load`), to its exact origin: a page that framed this one under
// another origin gets nothing.
if (window.parent !== window && nonce !== '' && /^https?:\/\/[^/]+$/.test(parentOrigin)) {
  const hello: HelloMessage = { kind: 'servicepay:hello', nonce };
  window.parent.postMessage(hello, parentOrigin);
}
