// The settings of a one-off script, validated as a function's are; a bad configuration ends the script
// with the message that names every bad key.
export async function loadSettingsOrExit(): Promise<void> {
  const { ConfigError, loadConfig } = await import('#lib/platform/config/load.ts');
  try {
    loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}
