// Bundles the extension into dist/extension.js (vscode stays external) and
// copies the timeline page, which is self-contained (no build step).
import * as esbuild from 'esbuild';
await esbuild.build({
  entryPoints: ['src/main.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  external: ['vscode'],
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: false,
  logLevel: 'warning',
});
