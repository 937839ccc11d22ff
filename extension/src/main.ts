// main.ts only activates: it builds the Ctx and starts the daemon. If that
// fails it says so itself, since VS Code would say nothing.
import * as vscode from 'vscode';
import { Ctx } from './ctx';

let ctx: Ctx | undefined;

export async function activate(extension: vscode.ExtensionContext): Promise<void> {
  ctx = new Ctx(extension);
  try {
    await ctx.start();
  } catch (e) {
    ctx.status.stopped(String(e));
    void vscode.window.showErrorMessage(`Seedfall could not start its daemon: ${e}`);
  }
}

export async function deactivate(): Promise<void> {
  await ctx?.stop();
}
