// client.ts creates the language client for `seedfall lsp`. Every
// server-side command the daemon lists in executeCommandProvider is
// registered by vscode-languageclient itself: we must not register it again.
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from 'vscode-languageclient/node';

export function createClient(serverBin: string, output: vscode.LogOutputChannel): LanguageClient {
  const serverOptions: ServerOptions = { command: serverBin, args: ['lsp'], transport: TransportKind.stdio };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', pattern: '**/seedfall*.json' },
      { scheme: 'file', language: 'go' },
      { scheme: 'file', language: 'rust' },
    ],
    outputChannel: output,
  };
  return new LanguageClient('seedfall', 'Seedfall', serverOptions, clientOptions);
}
