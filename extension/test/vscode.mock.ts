// The `vscode` module for unit tests: jest-mock-vscode's mock, with the
// bits of window/workspace our code calls stubbed per test. Like the real
// API, messages resolve (to no button) and withProgress runs its task.
import { vi } from 'vitest';
import { createVSCodeMock } from 'jest-mock-vscode';

const vscode = createVSCodeMock(vi);
for (const m of ['showErrorMessage', 'showWarningMessage', 'showInformationMessage'] as const) {
  vi.mocked(vscode.window[m]).mockImplementation((() => Promise.resolve(undefined)) as never);
}
vi.mocked(vscode.window.withProgress).mockImplementation(((_o: unknown, task: (p: unknown, t: unknown) => unknown) =>
  Promise.resolve(task({ report: () => undefined }, { isCancellationRequested: false }))) as never);
module.exports = vscode;
