// client.ts creates the language client for `seedfall lsp`. Every
// server-side command the daemon lists in executeCommandProvider is
// registered by vscode-languageclient itself: we must not register it again.
// Those commands (what a lens runs) pass through `executeCommand` here, so a
// lens click shows what it did exactly as a palette command does.
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';

/** Runs a daemon command and shows its result; `send` does the request. */
export type RunServerCommand = (command: string, args: Record<string, unknown>, send: () => Promise<unknown>) => Promise<unknown>;

export function createClient(serverBin: string, output: vscode.LogOutputChannel, run: RunServerCommand): LanguageClient {
  // No `transport`: stdio is the default, and TransportKind.stdio would add
  // `--stdio` to the arguments (which the daemon accepts, but need not get).
  const serverOptions: ServerOptions = { command: serverBin, args: ['lsp'] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', pattern: '**/seedfall*.json' },
      { scheme: 'file', language: 'go' },
      { scheme: 'file', language: 'rust' },
    ],
    outputChannel: output,
    middleware: {
      executeCommand: (command, args, next) => {
        const first = (args[0] ?? {}) as Record<string, unknown>;
        return run(command, first, () => Promise.resolve(next(command, args)));
      },
    },
  };
  return new LanguageClient('seedfall', 'Seedfall', serverOptions, clientOptions);
}
