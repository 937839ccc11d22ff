// config.ts: typed getters over the `seedfall.*` settings. No feature logic.
import * as vscode from 'vscode';

const section = () => vscode.workspace.getConfiguration('seedfall');

export const serverPath = (): string => section().get<string>('server.path', '') ?? '';
export const sweepSeeds = (): string => section().get<string>('sweep.seeds', '1-100') ?? '1-100';
export const exploreBudget = (): string => section().get<string>('explore.budget', '2m') ?? '2m';
export const continuousSeeds = (): string => section().get<string>('testing.continuousSeeds', '1-20') ?? '1-20';
export const branchSeeds = (): string => section().get<string>('moment.branchSeeds', '1-20') ?? '1-20';
export const exploreRounds = (): number => section().get<number>('explore.rounds', 30) ?? 30;

/** Settings whose change needs the daemon restarted. */
export const restartOn = ['seedfall.server.path'];
