// config.ts: typed getters over the `seedfall.*` settings. No feature logic.
import * as vscode from 'vscode';

const section = () => vscode.workspace.getConfiguration('seedfall');

export const serverPath = (): string => section().get<string>('server.path', '') ?? '';
export const sweepSeeds = (): string => section().get<string>('sweep.seeds', '1-100') ?? '1-100';
export const exploreRounds = (): number => section().get<number>('explore.rounds', 30) ?? 30;

/** Settings whose change needs the daemon restarted. */
export const restartOn = ['seedfall.server.path'];
