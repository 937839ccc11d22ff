// status.ts: the status bar item, fed by the daemon's seedfall/status.
import * as vscode from 'vscode';
import type { Status } from './lsp_ext';

export class StatusBar {
  readonly item: vscode.StatusBarItem;
  constructor() {
    this.item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'Seedfall';
    this.idle();
    this.item.show();
  }
  idle(): void {
    this.item.text = '$(beaker) seedfall';
    this.item.tooltip = 'Seedfall: idle';
  }
  update(s: Status): void {
    if (!s.running.length) return this.idle();
    this.item.text = `$(sync~spin) ${s.message || s.running[0].title}`;
    this.item.tooltip = s.running.map((r) => r.title).join('\n');
  }
  stopped(why: string): void {
    this.item.text = '$(error) seedfall';
    this.item.tooltip = `Seedfall: ${why}`;
  }
}
