import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { EngineScope, Selector } from './engine.ts';

// Script the three drivers send into pages, kept as source text: a function compiled by the test runner may
// carry helpers of its own (esbuild's `__name`) that do not exist in the page, and WebDriver takes text anyway.

const require = createRequire(import.meta.url);

/** axe-core's browser build, injected by each driver's own script channel (not governed by the page's CSP). */
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Finds the first element matching `css` in the document and every open shadow root under it whose trimmed
 * text or aria-label contains `text` (when given); null when there is none. `a >>> b` looks for `b` inside
 * the shadow root of an `a` (a descendant combinator never crosses a shadow root).
 */
const FIND_SOURCE = `(function (css, text) {
  function deepAll(root, selector) {
    var roots = [root], found = [];
    for (var i = 0; i < roots.length; i++) {
      var all = roots[i].querySelectorAll('*');
      for (var j = 0; j < all.length; j++) if (all[j].shadowRoot) roots.push(all[j].shadowRoot);
      var matches = roots[i].querySelectorAll(selector);
      for (var m = 0; m < matches.length; m++) found.push(matches[m]);
    }
    return found;
  }
  var scopes = [document], steps = css.split('>>>');
  for (var s = 0; s < steps.length; s++) {
    var next = [];
    for (var k = 0; k < scopes.length; k++) {
      var within = scopes[k] === document ? document : scopes[k].shadowRoot || scopes[k];
      next = next.concat(deepAll(within, steps[s].trim()));
    }
    scopes = next;
  }
  for (var n = 0; n < scopes.length; n++) {
    var el = scopes[n];
    if (text == null) return el;
    var label = (el.getAttribute('aria-label') || '') + ' ' + (el.textContent || '');
    if (label.replace(/\\s+/g, ' ').indexOf(text) !== -1) return el;
  }
  return null;
})`;

/** An expression that answers the element `selector` names, or null. */
export function findExpression(selector: Selector): string {
  const { css, text } = typeof selector === 'string' ? { css: selector, text: undefined } : selector;
  return `${FIND_SOURCE}(${JSON.stringify(css)}, ${JSON.stringify(text ?? null)})`;
}

/** How a selector reads in an error message. */
export function describeSelector(selector: Selector): string {
  return typeof selector === 'string'
    ? selector
    : `${selector.css}${selector.text ? ` with text "${selector.text}"` : ''}`;
}

/** An expression calling `fn` (sent as its source) with JSON arguments. */
export function callExpression(fn: (...args: never[]) => unknown, args: unknown[]): string {
  return `(${fn.toString()})(${args.map((arg) => JSON.stringify(arg) ?? 'undefined').join(', ')})`;
}

/**
 * An expression that loads axe-core into the document once and answers `typeof axe` ("object" when loaded).
 * axe's bundle is statements: it runs inside a function, and installs itself on `window`.
 */
export const AXE_LOAD_EXPRESSION = `(function () {
  if (typeof window.axe !== 'object') {
${AXE_SOURCE}
  }
  return typeof window.axe;
})()`;

/**
 * Records every `securitypolicyviolation` of the document in `window.__engineCspViolations`. Installed before
 * any page script where the driver can (Chromium's init scripts, Firefox's BiDi preload scripts, both in every
 * frame); WebKit's WebDriver has no such hook, so there it is installed when the test first looks.
 */
export const CSP_LISTENER_SOURCE = `(function () {
  if (window.__engineCspViolations) return true;
  window.__engineCspViolations = [];
  document.addEventListener('securitypolicyviolation', function (event) {
    window.__engineCspViolations.push(
      event.violatedDirective + ' blocked ' + (event.blockedURI || '(inline)') + ' in ' + event.documentURI
    );
  });
  return true;
})()`;

/**
 * Where the driver has no console events (WebKit's WebDriver classic): records the document's console errors and
 * warnings, uncaught errors and unhandled rejections in `window.__engineProblems`, from when it is installed.
 */
export const PROBLEM_RECORDER_SOURCE = `(function () {
  if (window.__engineProblems) return true;
  var problems = (window.__engineProblems = []);
  ['error', 'warn'].forEach(function (level) {
    var original = console[level];
    console[level] = function () {
      var text = Array.prototype.map.call(arguments, String).join(' ');
      problems.push((level === 'warn' ? 'warning' : 'error') + ': ' + text + ' (' + location.href + ')');
      return original.apply(console, arguments);
    };
  });
  window.addEventListener('error', function (event) {
    problems.push('pageerror: ' + event.message + ' (' + location.href + ')');
  });
  window.addEventListener('unhandledrejection', function (event) {
    problems.push('pageerror: unhandled rejection ' + String(event.reason) + ' (' + location.href + ')');
  });
  return true;
})()`;

/** Turns an engine's `run` into the {@link EngineScope} the tests use. */
export function scopeOf(parts: Pick<EngineScope, 'run' | 'click' | 'type'>): EngineScope {
  return {
    ...parts,
    evaluate: (fn, ...args) => parts.run(callExpression(fn as (...args: never[]) => unknown, args)),
  };
}
