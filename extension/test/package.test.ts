// Packaging: the per-platform .vsix builds offline and holds the bundled
// extension, the timeline page and the seedfall binary with its run bit.
import { describe, it, expect } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..');

describe('vsix', () => {
  it('contains the binary, executable, and what the extension needs', () => {
    execFileSync(process.execPath, [path.join(root, 'scripts/package.mjs')], { cwd: root, stdio: 'pipe' });
    const vsix = path.join(root, 'seedfall-linux-x64.vsix');
    expect(fs.existsSync(vsix)).toBe(true);
    const list = spawnSync('python3', ['-c', `
import sys, zipfile
for i in zipfile.ZipFile(sys.argv[1]).infolist():
    print(i.filename, oct((i.external_attr >> 16) & 0o777))
`, vsix]).stdout.toString();
    const entries = Object.fromEntries(list.trim().split('\n').map((l) => l.split(' ')));
    expect(entries['extension/server/seedfall']).toBe('0o755');
    for (const f of ['extension/dist/extension.js', 'extension/media/timeline.html', 'extension/package.json', 'extension/schema/seedfall.schema.json']) expect(entries).toHaveProperty([f]);
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    // The config's schema, for every config name the daemon takes (state.rs's is_config_name).
    const [validation] = manifest.contributes.jsonValidation;
    expect(validation.url).toBe('./schema/seedfall.schema.json');
    expect(validation.fileMatch).toEqual(['seedfall.json', 'seedfall.*.json', 'seedfall-*.json', 'seedfall_*.json', '!seedfall-findings.json']);
    expect(manifest.activationEvents).toContain('workspaceContains:**/seedfall*.json');
    // No duplicate registration of server commands: the palette's are ours (seedfall.ui.*).
    const ids: string[] = manifest.contributes.commands.map((c: { command: string }) => c.command);
    expect(ids.every((id) => id.startsWith('seedfall.ui.'))).toBe(true);
    expect(manifest.contributes.commands.every((c: { category: string }) => c.category === 'Seedfall')).toBe(true);
  });
});
