import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, configLeaves, envNameOf, loadConfig } from '#lib/platform/config/load.ts';
import { isProduction } from '#lib/platform/config/schema.ts';

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('names every bad key in one error', () => {
    const error = configError(() =>
      loadConfig({
        env: {
          APP_CONFIG_JSON: JSON.stringify({ upload: { max_bytes: 'big' } }),
          PORT: 'eighty',
          BASE_URL: 'not a url',
          PAYMENT__CHANNEL_B__API_V3_KEY: 'too-short',
          PAYMENT__DEFAULT_GATEWAY: 'paypal',
        },
      }),
    );
    const keys = error.problems.map((problem) => problem.split(':')[0]);
    expect(keys.sort()).toEqual(
      [
        'base_url',
        'payment.channel_b.api_v3_key',
        'payment.default_gateway',
        'port',
        'upload.max_bytes',
      ].sort(),
    );
    expect(error.message).toContain('payment.channel_b.api_v3_key: must be exactly 32 bytes');
    expect(error.message).not.toContain('too-short');
  });

  it('refuses the secrets-manager front door without the secret it names, at start', () => {
    const error = configError(() =>
      loadConfig({ env: { APP_CONFIG_JSON: '{}', FRONT_DOOR__PROVIDER: 'secrets-manager' } }),
    );
    expect(error.problems).toEqual([
      'front_door.secret_id: is required when front_door.provider is secrets-manager',
    ]);
    const named = loadConfig({
      env: { APP_CONFIG_JSON: '{}', FRONT_DOOR__PROVIDER: 'secrets-manager', FRONT_DOOR__SECRET_ID: 'arn:x' },
    });
    expect(named.front_door).toMatchObject({ provider: 'secrets-manager', secret_id: 'arn:x' });
  });

  it('applies environment overrides by the A__B__C rule with typed values', () => {
    const loaded = loadConfig({
      env: {
        APP_CONFIG_JSON: '{"payment":{"mock":{"enabled":false}}}',
        PAYMENT__MOCK__ENABLED: 'true',
        UPLOAD__MAX_BYTES: '1024',
        UPLOAD__ALLOWED_TYPES: 'png,gif',
        BASE_URL: 'https://img.example.com/',
      },
    });
    expect(loaded.payment.mock.enabled).toBe(true);
    expect(loaded.upload.max_bytes).toBe(1024);
    expect(loaded.upload.allowed_types).toEqual(['png', 'gif']);
    expect(loaded.base_url).toBe('https://img.example.com');
  });

  it('defaults the mock cashier off and the order lifetime to 30 minutes', () => {
    const loaded = loadConfig({ env: { APP_CONFIG_JSON: '{}' } });
    expect(loaded.payment.mock.enabled).toBe(false);
    expect(loaded.payment.order_ttl_minutes).toBe(30);
    expect(loaded.auth.session_ttl_hours).toBe(24);
    expect(loaded.upload.max_bytes).toBe(4 * 1024 * 1024);
  });

  it('marks a deployment production by deployment.production, whatever its stage; unset, by the old names', () => {
    const production = (stage: string, env: Record<string, string> = {}) =>
      isProduction(loadConfig({ env: { APP_CONFIG_JSON: JSON.stringify({ stage }), ...env } }));

    expect(production('live', { DEPLOYMENT__PRODUCTION: 'true' })).toBe(true);
    expect(production('prod')).toBe(true);
    expect(production('production')).toBe(true);
    expect(production('live')).toBe(false);
    expect(production('prod', { DEPLOYMENT__PRODUCTION: 'false' })).toBe(false);
  });

  it('reads the file named by APP_CONFIG and reports a missing one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'config-'));
    writeFileSync(join(dir, 'stage.json'), JSON.stringify({ stage: 'prod', table_name: 'prod-table' }));
    expect(loadConfig({ env: { APP_CONFIG: 'stage.json' }, cwd: dir }).table_name).toBe('prod-table');
    expect(configError(() => loadConfig({ env: { APP_CONFIG: 'absent.json' }, cwd: dir })).message).toContain(
      'APP_CONFIG',
    );
    writeFileSync(join(dir, 'broken.json'), '{ nope');
    expect(configError(() => loadConfig({ env: { APP_CONFIG: 'broken.json' }, cwd: dir })).message).toContain(
      'not valid JSON',
    );
  });

  it('returns a frozen object', () => {
    const loaded = loadConfig({ env: { APP_CONFIG_JSON: '{}' } });
    expect(Object.isFrozen(loaded)).toBe(true);
    expect(Object.isFrozen(loaded.payment.channel_b)).toBe(true);
  });

  it('lists every leaf with its environment name', () => {
    const leaves = configLeaves();
    expect(leaves.get('payment.channel_b.api_v3_key')).toBe('string');
    expect(leaves.get('upload.max_bytes')).toBe('number');
    expect(leaves.get('payment.mock.enabled')).toBe('boolean');
    expect(envNameOf('admin.bootstrap.password')).toBe('ADMIN__BOOTSTRAP__PASSWORD');
  });
});
