// The web UI's static files: the TypeScript under web/app is bundled and minified by
// esbuild in memory when the daemon starts (about a tenth of a second; no build step, no
// generated files in the tree, never out of date). Each asset is served under a name with
// its content hash, so browsers may cache it for good, and gzipped once here.
//
// The script is split: the entry (app.<hash>.js) holds what every page needs, and what a
// page imports with `import()` (the code viewer, each language's grammar) becomes chunks
// that esbuild names by their content hash (chunk-<hash>.js) and that the entry loads by a
// relative path, so the search page downloads none of CodeMirror.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface Asset {
  /** `/-/static/<name>.<hash>.<ext>` */
  path: string;
  type: string;
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

export interface WebAssets {
  script: Asset;
  /** The chunks the script loads on demand. */
  chunks: Asset[];
  style: Asset;
  icon: Asset;
  byPath: Map<string, Asset>;
}

const JS = 'text/javascript; charset=utf-8';

function asset(name: string, ext: string, type: string, body: Buffer, hashed = false): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
  const path = hashed ? `/-/static/${name}.${ext}` : `/-/static/${name}.${hash}.${ext}`;
  return { path, type, body, gzip: gzipSync(body, { level: 9 }), etag: `"${hash}"` };
}

/** Bundles web/app (under `root`, the project directory). */
export async function buildAssets(root: string): Promise<WebAssets> {
  const esbuild = await import('esbuild');
  try {
    const result = await esbuild.build({
      entryPoints: { app: join(root, 'web/app/main.ts'), style: join(root, 'web/app/style.css') },
      bundle: true,
      splitting: true,
      chunkNames: 'chunk-[hash]',
      minify: true,
      format: 'esm',
      target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
      write: false,
      outdir: 'out',
      legalComments: 'none',
      logLevel: 'silent',
      tsconfig: join(root, 'web/tsconfig.json'),
    });
    const out = (suffix: string): Buffer => {
      const f = result.outputFiles.find((o) => o.path.endsWith(suffix));
      if (!f) throw new Error(`the web bundle has no ${suffix}`);
      return Buffer.from(f.contents);
    };
    const script = asset('app', 'js', JS, out('/app.js'));
    const style = asset('app', 'css', 'text/css; charset=utf-8', out('/style.css'));
    const icon = asset('icon', 'svg', 'image/svg+xml', readFileSync(join(root, 'web/app/icon.svg')));
    const chunks = result.outputFiles
      .filter((o) => /\/chunk-[A-Z0-9]+\.js$/.test(o.path))
      .map((o) => asset(basename(o.path, '.js'), 'js', JS, Buffer.from(o.contents), true));
    return { script, chunks, style, icon, byPath: new Map([script, style, icon, ...chunks].map((a) => [a.path, a])) };
  } finally {
    // esbuild keeps a helper process for later builds; the daemon builds once.
    await esbuild.stop();
  }
}
