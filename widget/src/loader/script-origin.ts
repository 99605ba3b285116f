/**
 * The widget host this copy of `widget.js` came from, read once while the script runs (`currentScript` is
 * only set then). The frame is loaded from the same host, so the same bytes work on the test and the
 * production host. `undefined` when the script was not loaded by a `<script src>` (bundled, or eval'd).
 *
 * @example
 * const origin = scriptOrigin(); // "https://js.servicepay.example" or undefined
 */
const captured: string | undefined = (() => {
  if (typeof document === 'undefined') return undefined;
  const script = document.currentScript;
  if (!(script instanceof HTMLScriptElement) || script.src === '') return undefined;
  try {
    const { origin } = new URL(script.src);
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
})();

export function scriptOrigin(): string | undefined {
  return captured;
}
