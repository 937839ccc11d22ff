import { defineConfig } from 'vitest/config';
import path from 'node:path';
// Hooks get the tests' timeout, not vitest's 10 s: timeline.test.ts's
// beforeAll runs `seedfall inspect` on examples/kvlog, which on a cold
// guest cache builds and compiles the module first (16 s on 2 cores), and
// vitest runs the test files side by side.
export default defineConfig({
  resolve: { alias: { vscode: path.resolve('test/vscode.mock.ts') } },
  test: { include: ['test/**/*.test.ts'], testTimeout: 120000, hookTimeout: 120000 },
});
