/**
 * Widget size: gzip of `widget.js` (what the merchant page loads, target ≤ 10 KB) and of everything the
 * checkout iframe loads (`frame.html` + `frame.js` + `frame.css`, target ≤ 30 KB), at gzip's default level
 * (what most CDNs send) and at -9. Baseline from the same run: Lit alone (a one-line LitElement bundled the
 * same way), the floor any Lit overlay pays.
 *
 *   node --import tsx bench/widget-size.ts
 */
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { loadWidgetRelease } from '../reference-server/src/widget-hosts/widget-assets.ts';
import { buildWidget } from '../widget/scripts/build.ts';
import { reportTarget } from './support/targets.ts';

await buildWidget();
const release = loadWidgetRelease();
if (!release) throw new Error('widget/dist is missing after the build');
const bytes = (name: string) => release.assets.get(name)?.body ?? Buffer.alloc(0);
const gzip = (body: Buffer, level: number) => gzipSync(body, { level }).byteLength;
const kb = (value: number) => `${(value / 1024).toFixed(1)} KB`;

const lit = await build({
  stdin: {
    contents:
      "import { LitElement, html } from 'lit'; customElements.define('x-a', class extends LitElement { render() { return html`<p>a</p>`; } });",
    resolveDir: new URL('../widget/', import.meta.url).pathname,
  },
  bundle: true,
  minify: true,
  format: 'iife',
  write: false,
});
const litOnly = Buffer.from(lit.outputFiles[0]?.contents ?? new Uint8Array());

const frameFiles = ['frame.html', 'frame.js', 'frame.css'];
const rows: Array<[string, Buffer, number | undefined]> = [
  ['widget.js', bytes('widget.js'), 10 * 1024],
  ['iframe total (html+js+css)', Buffer.concat(frameFiles.map(bytes)), 30 * 1024],
  ['  frame.js', bytes('frame.js'), undefined],
  ['baseline: Lit alone', litOnly, undefined],
];
console.log(`widget ${release.version}`);
console.log('what'.padEnd(30), 'raw'.padStart(10), 'gzip'.padStart(10), 'gzip -9'.padStart(10), '  target');
for (const [name, body, target] of rows) {
  const size = gzip(body, 6);
  const verdict = target === undefined ? '' : `≤ ${kb(target)} ${size <= target ? 'met' : 'MISSED'}`;
  console.log(
    name.padEnd(30),
    kb(body.byteLength).padStart(10),
    kb(size).padStart(10),
    kb(gzip(body, 9)).padStart(10),
    ` ${verdict}`,
  );
  if (target !== undefined) {
    reportTarget({
      measure: `widget size: ${name} (gzip)`,
      figure: kb(size),
      baseline: `Lit alone ${kb(gzip(litOnly, 6))}`,
      target: `≤ ${kb(target)}`,
      met: size <= target,
    });
  }
}
