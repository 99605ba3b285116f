import { ServicePayFrameApp } from './servicepay-frame-app.ts';

if (!customElements.get('servicepay-frame-app'))
  customElements.define('servicepay-frame-app', ServicePayFrameApp);
