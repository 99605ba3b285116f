import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The widget package's folder; its `dist/` holds what `npm run build -w @servicepay/widget` made. Found as a
 * package, not by a path from this file: the compiled server (`dist/cli.js`) sits elsewhere than its source.
 */
export const WIDGET_PACKAGE_DIR = dirname(
  createRequire(import.meta.url).resolve('@servicepay/widget/package.json'),
);

export interface WidgetAsset {
  body: Buffer;
  contentType: string;
  etag: string;
  /** `sha384-…`, for `<script integrity>`. */
  integrity: string;
}

export interface WidgetRelease {
  version: string;
  assets: Map<string, WidgetAsset>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
};

const SERVED = ['widget.js', 'frame.js', 'frame.css', 'frame.html', 'hosted.js', 'hosted.css'] as const;

/**
 * One file as a host serves it: its bytes, their content type (from the name), ETag and SRI hash, all made
 * from those very bytes.
 *
 * @example
 * widgetAsset('frame.html', Buffer.from(page)).integrity; // "sha384-…" of exactly `page`
 */
export function widgetAsset(name: string, body: Buffer): WidgetAsset {
  const extension = name.slice(name.lastIndexOf('.'));
  const digest = createHash('sha384').update(body).digest('base64');
  return {
    body,
    contentType: CONTENT_TYPES[extension] ?? 'application/octet-stream',
    etag: `"${digest.slice(0, 27)}"`,
    integrity: `sha384-${digest}`,
  };
}

/**
 * The version the hosts serve: `widget/package.json`'s.
 *
 * @example
 * widgetVersion(); // "0.1.0" → /v0.1.0/widget.js
 */
export function widgetVersion(packageDir = WIDGET_PACKAGE_DIR): string {
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as {
    version: string;
  };
  return version;
}

/**
 * Reads the built widget from `widget/dist/` into memory with each file's ETag and SRI hash (computed here
 * from the bytes served, not trusted from the build's manifest). `undefined` when the widget is not built.
 *
 * @example
 * const release = loadWidgetRelease();
 * release?.assets.get('widget.js')?.integrity; // "sha384-…"
 */
export function loadWidgetRelease(packageDir = WIDGET_PACKAGE_DIR): WidgetRelease | undefined {
  const version = widgetVersion(packageDir);
  const assets = new Map<string, WidgetAsset>();
  try {
    for (const name of SERVED)
      assets.set(name, widgetAsset(name, readFileSync(join(packageDir, 'dist', name))));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return { version, assets };
}
