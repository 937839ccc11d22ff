// Builds the per-platform .vsix: bundles the extension, copies the seedfall
// binary (with its run bit) into server/, and packages with @vscode/vsce,
// offline (everything comes from the npm registry and this repository).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.SEEDFALL_BIN || path.resolve(root, '../target/release/seedfall');
const target = process.env.VSCE_TARGET || 'linux-x64';
if (!fs.existsSync(bin)) throw new Error(`no seedfall binary at ${bin}: build it with cargo build --release -p seedfall`);
execFileSync(process.execPath, [path.join(root, 'esbuild.mjs')], { cwd: root, stdio: 'inherit' });
fs.mkdirSync(path.join(root, 'server'), { recursive: true });
const dest = path.join(root, 'server', 'seedfall');
fs.copyFileSync(bin, dest);
fs.chmodSync(dest, 0o755);
const out = path.join(root, `seedfall-${target}.vsix`);
execFileSync(path.join(root, 'node_modules/.bin/vsce'), ['package', '--target', target, '--no-dependencies', '--allow-missing-repository', '--skip-license', '-o', out], { cwd: root, stdio: 'inherit' });
console.log(out);
