// timeline.ts: the webview showing one run's events (media/timeline.html,
// a self-contained page that also runs standalone on a JSON file). A click
// on an event with a source location opens it in the editor.
import * as vscode from 'vscode';
import * as fs from 'fs';
import * as path from 'path';
import type { TimelineEvent } from './lsp_ext';

/** `focus: 'failure'` opens it with the failure's details shown;
 *  `onMoment` offers "Open at this moment" on the selected event. */
export function openTimeline(extensionPath: string, title: string, events: TimelineEvent[], sources: Map<string, string>, focus?: 'failure', onMoment?: (index: number) => void): vscode.WebviewPanel {
  const panel = vscode.window.createWebviewPanel('seedfall.timeline', `Seedfall timeline: ${title}`, vscode.ViewColumn.Beside, { enableScripts: true, localResourceRoots: [] });
  panel.webview.html = pageHtml(extensionPath, 'timeline.html', { title, events, focus, moments: !!onMoment });
  panel.webview.onDidReceiveMessage((m: { type: string; location?: string; index?: number }) => {
    if (m.type === 'moment' && typeof m.index === 'number' && onMoment) return onMoment(m.index);
    if (m.type !== 'open' || !m.location) return;
    const [file, line] = splitLocation(m.location, sources);
    if (file) void vscode.window.showTextDocument(vscode.Uri.file(file), { selection: new vscode.Range(line - 1, 0, line - 1, 0) });
  });
  return panel;
}

/** A page of media/ (self-contained, standalone too) as a webview's HTML:
 *  scripts only by nonce, no remote content, `data` injected where the page
 *  reads it (`/*SEEDFALL_DATA*\/null`). */
export function pageHtml(extensionPath: string, page: string, data: unknown): string {
  const html = fs.readFileSync(path.join(extensionPath, 'media', page), 'utf8');
  const nonce = Math.random().toString(36).slice(2);
  const csp = `default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}';`;
  return html
    .replace('<meta name="seedfall-csp">', `<meta http-equiv="Content-Security-Policy" content="${csp}">`)
    .replace(/<script>/g, `<script nonce="${nonce}">`)
    .replace('/*SEEDFALL_DATA*/null', JSON.stringify(data).replace(/</g, '\\u003c'));
}

/** `file:line` to an absolute file (via known sources) and a line. */
export function splitLocation(location: string, sources: Map<string, string>): [string | undefined, number] {
  const i = location.lastIndexOf(':');
  const file = i > 0 ? location.slice(0, i) : location;
  const line = Number(location.slice(i + 1)) || 1;
  if (path.isAbsolute(file)) return [file, line];
  for (const [suffix, abs] of sources) if (file.endsWith(suffix) || suffix.endsWith(file)) return [abs, line];
  return [undefined, line];
}
