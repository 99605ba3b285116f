declare const __SERVICEPAY_WIDGET_VERSION__: string | undefined;

/**
 * The widget package's version, baked in by the build (`widget/package.json`). The loader opens the frame of
 * its own version, so a pinned `widget.js` always talks to the frame it was released with.
 *
 * @example
 * `${origin}/v${WIDGET_VERSION}/frame.html`
 */
export const WIDGET_VERSION: string =
  typeof __SERVICEPAY_WIDGET_VERSION__ === 'string' ? __SERVICEPAY_WIDGET_VERSION__ : '0.0.0-dev';
