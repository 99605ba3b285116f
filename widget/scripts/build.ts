/**
 * Builds what the widget hosts serve into `widget/dist/`: `widget.js` (IIFE, minified: the one script tag),
 * `frame.js` + `frame.css` + `frame.html` (the checkout page in the iframe; its `<title>` comes from
 * `src/texts.ts` here, the host fills in the other placeholders), and `manifest.json` with each file's size
 * and SRI hash. Each file is written to a temporary name and renamed, so a host (or a test building in
 * parallel) never reads half a file.
 *
 * @example
 * // npm run build -w @servicepay/widget
 * import { buildWidget } from './build.ts';
 * await buildWidget();
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { frameTexts } from '../src/texts.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');

export interface WidgetManifest {
  version: string;
  files: Record<string, { bytes: number; integrity: string }>;
}

/** Lit's `css` templates are strings esbuild cannot minify: squeeze their whitespace here (no `${}` inside). */
const minifyCssTemplates: Plugin = {
  name: 'minify-css-templates',
  setup(context) {
    context.onLoad({ filter: /\.styles\.ts$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const contents = source.replace(/css`([^`]*)`/g, (_match, body: string) => {
        const squeezed = body
          .replace(/\s+/g, ' ')
          .replace(/\s*([{};,])\s*/g, '$1')
          .replace(/:\s+/g, ':')
          .replace(/;}/g, '}')
          .trim();
        return `css\`${squeezed}\``;
      });
      return { contents, loader: 'ts' };
    });
  },
};

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const integrity = (bytes: Uint8Array) => `sha384-${createHash('sha384').update(bytes).digest('base64')}`;

function writeAtomically(name: string, bytes: Uint8Array | string): void {
  const temporary = join(dist, `.${name}.${process.pid}.${Date.now()}.tmp`);
  writeFileSync(temporary, bytes);
  renameSync(temporary, join(dist, name));
}

export async function buildWidget(): Promise<WidgetManifest> {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  mkdirSync(dist, { recursive: true });
  const bundle = async (entry: string) => {
    const result = await build({
      entryPoints: [join(root, entry)],
      bundle: true,
      format: 'iife',
      minify: true,
      target: ['chrome100', 'firefox100', 'safari15.4', 'edge100'],
      define: { __SERVICEPAY_WIDGET_VERSION__: JSON.stringify(version) },
      legalComments: 'none',
      charset: 'utf8',
      write: false,
      tsconfig: join(root, 'tsconfig.json'),
      plugins: [minifyCssTemplates],
    });
    const file = result.outputFiles[0];
    if (!file) throw new Error(`esbuild wrote nothing for ${entry}`);
    return file.contents;
  };
  // Lit's licence (BSD-3-Clause) travels as a notice at the top instead of esbuild's per-file comments.
  const notice =
    '/*! ServicePay widget. Includes Lit (BSD-3-Clause, Google LLC) and eventsource-parser (MIT). */\n';
  const files: Record<string, Uint8Array> = {
    'widget.js': Buffer.concat([Buffer.from(notice), await bundle('src/loader/widget.ts')]),
    'frame.js': Buffer.concat([Buffer.from(notice), await bundle('src/frame/frame.ts')]),
    'frame.css': readFileSync(join(root, 'src/frame/frame.css')),
    // The widget hosts' payer-facing pages (issue 36): the hosted checkout's script and the pages' styles.
    'hosted.js': Buffer.concat([Buffer.from(notice), await bundle('src/hosted/hosted-checkout.ts')]),
    'hosted.css': readFileSync(join(root, 'src/hosted/hosted.css')),
    'frame.html': Buffer.from(
      readFileSync(join(root, 'src/frame/frame.html'), 'utf8').replace(
        '%TITLE%',
        escapeHtml(frameTexts.pageTitle),
      ),
    ),
  };
  const manifest: WidgetManifest = { version, files: {} };
  for (const [name, bytes] of Object.entries(files)) {
    writeAtomically(name, bytes);
    manifest.files[name] = { bytes: bytes.byteLength, integrity: integrity(bytes) };
  }
  writeAtomically('manifest.json', `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const manifest = await buildWidget();
  for (const [name, file] of Object.entries(manifest.files)) {
    process.stdout.write(`${name.padEnd(11)} ${file.bytes} bytes
`);
  }
}
