// Runs before each test file that starts no stand-in: the test settings, and quiet logs.
import { configureLogging } from '#lib/platform/log.ts';

process.env.APP_CONFIG = 'test/support/test-config.json';
// Vitest exports Vite's BASE_URL ('/'), which is also this service's base_url override.
process.env.BASE_URL = 'http://localhost:3000';
configureLogging({ level: 'silent' });
