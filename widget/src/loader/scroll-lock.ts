/**
 * Locks the merchant page's scroll while the overlay is open, iOS Safari included (there `overflow: hidden`
 * on the root is not enough, so the body is pinned with `position: fixed` at the current offset), and gives
 * back exactly what was there: the inline styles, or no `style` attribute at all if there was none. Set
 * through the CSSOM, which a CSP without `'unsafe-inline'` allows.
 *
 * @example
 * const unlock = lockScroll();
 * // … overlay open …
 * unlock();
 */
export function lockScroll(): () => void {
  const root = document.documentElement;
  const body = document.body;
  const scrollY = window.scrollY;
  const saved = [root, body].map((element) => ({
    element,
    attribute: element.getAttribute('style'),
  }));
  root.style.setProperty('overflow', 'hidden');
  body.style.setProperty('overflow', 'hidden');
  body.style.setProperty('position', 'fixed');
  body.style.setProperty('top', `-${scrollY}px`);
  body.style.setProperty('left', '0');
  body.style.setProperty('right', '0');
  return () => {
    for (const { element, attribute } of saved) {
      if (attribute === null || attribute.trim() === '') {
        // Chromium writes the CSSOM back to the attribute lazily: read it once so the removal is final,
        // or a later read would bring back an empty `style=""`.
        element.getAttribute('style');
        element.removeAttribute('style');
      } else element.setAttribute('style', attribute);
    }
    window.scrollTo(0, scrollY);
  };
}
