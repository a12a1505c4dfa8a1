// The validated, frozen settings of this process: the only module that reads the environment.
import { configureLogging } from '#lib/platform/log.ts';
import { loadConfig } from './load.ts';

export type { AppConfig, Provider } from './schema.ts';

export const config = loadConfig();
configureLogging({ level: config.log.level });
