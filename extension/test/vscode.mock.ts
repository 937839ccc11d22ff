// The `vscode` module for unit tests: jest-mock-vscode's mock, with the
// bits of window/workspace our code calls stubbed per test.
import { vi } from 'vitest';
import { createVSCodeMock } from 'jest-mock-vscode';

const vscode = createVSCodeMock(vi);
module.exports = vscode;
