// bootstrap.ts alone locates the daemon binary: the `seedfall.server.path`
// setting, else the binary bundled in the extension (server/seedfall).
import * as path from 'path';
import * as fs from 'fs';
import { serverPath } from './config';

export function findServer(extensionPath: string): string {
  const configured = serverPath();
  if (configured) return configured;
  const bundled = path.join(extensionPath, 'server', process.platform === 'win32' ? 'seedfall.exe' : 'seedfall');
  if (fs.existsSync(bundled)) return bundled;
  throw new Error(`the seedfall binary is not bundled at ${bundled}; set "seedfall.server.path"`);
}
