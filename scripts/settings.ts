import { NoRunningStackError, type RunningStack, useRunningStack } from './running-stack.ts';

// The SDK's notice that its 2027 releases need Node 22: the lock file pins today's, which run on 20. Set
// when this module loads, before any script imports the SDK.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * The settings of a one-off script, validated as a function's are; a bad configuration ends the script
 * with the message that names every bad key. Against the local stand-ins of a running `npm start` unless
 * TABLE_NAME (or an endpoint) names another table; with neither, one line says what to do.
 */
export async function loadSettingsOrExit(): Promise<RunningStack | undefined> {
  const { ConfigError, loadConfig } = await import('#lib/platform/config/load.ts');
  try {
    const running = useRunningStack(loadConfig().data_dir);
    loadConfig();
    return running;
  } catch (error) {
    if (error instanceof ConfigError || error instanceof NoRunningStackError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}
