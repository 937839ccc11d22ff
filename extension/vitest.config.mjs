import { defineConfig } from 'vitest/config';
import path from 'node:path';
export default defineConfig({
  resolve: { alias: { vscode: path.resolve('test/vscode.mock.ts') } },
  test: { include: ['test/**/*.test.ts'], testTimeout: 120000 },
});
