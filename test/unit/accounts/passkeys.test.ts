// Passkeys without I/O (docs/DESIGN.md 18): the relying party from settings, the challenge read from a
// response, and the software authenticator the integration tests use, checked against RFC 8949's CBOR
// examples and against @simplewebauthn/server itself.
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { describe, expect, it } from 'vitest';
import { relyingPartyOf } from '#functions/accounts/deps.ts';
import { signedChallengeOf } from '#lib/accounts/webauthn.ts';
import { ConfigError, loadConfig } from '#lib/platform/config/load.ts';
import { cbor, SoftAuthenticator } from '#test/support/webauthn.ts';

const settings = (json: object) => loadConfig({ env: { APP_CONFIG_JSON: JSON.stringify(json) } });

describe('the relying party', () => {
  it("is base_url's host and origin unless auth.passkeys says otherwise", () => {
    expect(relyingPartyOf(settings({ base_url: 'https://files.example.com/' }))).toEqual({
      id: 'files.example.com',
      name: 'Account Service',
      origins: ['https://files.example.com'],
    });
    const split = relyingPartyOf(
      settings({
        base_url: 'https://api.example.com',
        auth: {
          passkeys: {
            rp_id: 'example.com',
            origins: ['https://console.example.com', 'https://api.example.com'],
          },
        },
      }),
    );
    expect(split).toMatchObject({
      id: 'example.com',
      origins: ['https://api.example.com', 'https://console.example.com'],
    });
  });

  it('refuses an RP ID or origin of the wrong shape at start, naming the key', () => {
    expect(() => settings({ auth: { passkeys: { rp_id: 'https://example.com' } } })).toThrow(ConfigError);
    expect(() => settings({ auth: { passkeys: { rp_id: 'https://example.com' } } })).toThrow(
      /auth\.passkeys\.rp_id/,
    );
    expect(() => settings({ auth: { passkeys: { origins: ['example.com/path'] } } })).toThrow(
      /auth\.passkeys\.origins/,
    );
  });
});

describe('the challenge a response signed', () => {
  it('is read from clientDataJSON, and nothing from a malformed one', () => {
    const clientDataJSON = Buffer.from(
      JSON.stringify({ type: 'webauthn.get', challenge: 'abcdefghijklmnopqrstuv' }),
    ).toString('base64url');
    expect(signedChallengeOf({ response: { clientDataJSON } })).toBe('abcdefghijklmnopqrstuv');
    for (const bad of [
      '',
      'not json',
      Buffer.from('{"challenge":5}').toString('base64url'),
      Buffer.from('{"challenge":"a#b"}').toString('base64url'),
    ]) {
      expect(signedChallengeOf({ response: { clientDataJSON: bad } })).toBeUndefined();
    }
  });
});

describe('the software authenticator', () => {
  it("encodes CBOR as RFC 8949's examples", () => {
    const hex = (value: Parameters<typeof cbor>[0]) => cbor(value).toString('hex');
    expect([0, 23, 24, 100, 1000, 1_000_000, -1, -100, -1000].map(hex)).toEqual([
      '00',
      '17',
      '1818',
      '1864',
      '1903e8',
      '1a000f4240',
      '20',
      '3863',
      '3903e7',
    ]);
    expect(hex('a')).toBe('6161');
    expect(hex(new Uint8Array([1, 2, 3, 4]))).toBe('4401020304');
    expect(hex([1, [2, 3], [4, 5]])).toBe('8301820203820405');
    expect(
      hex(
        new Map([
          [1, 2],
          [3, 4],
        ]),
      ),
    ).toBe('a201020304');
  });

  it('registers and signs as the library expects, and a counter that went backwards fails', async () => {
    const device = new SoftAuthenticator('https://example.com');
    const creation = await generateRegistrationOptions({
      rpName: 'Test',
      rpID: 'example.com',
      userName: 'ann',
    });
    const registered = await verifyRegistrationResponse({
      response: { ...device.register(creation), clientExtensionResults: {} },
      expectedChallenge: creation.challenge,
      expectedOrigin: 'https://example.com',
      expectedRPID: 'example.com',
      requireUserVerification: true,
    });
    expect(registered.verified).toBe(true);
    const credential = registered.registrationInfo!.credential;
    const request = await generateAuthenticationOptions({ rpID: 'example.com' });
    const signIn = (counter: number, stored: number) =>
      verifyAuthenticationResponse({
        response: { ...device.authenticate(request, { counter }), clientExtensionResults: {} },
        expectedChallenge: request.challenge,
        expectedOrigin: 'https://example.com',
        expectedRPID: 'example.com',
        credential: { ...credential, counter: stored },
      });
    expect((await signIn(5, 0)).authenticationInfo.newCounter).toBe(5);
    await expect(signIn(3, 5)).rejects.toThrow(/counter/i);
  });
});
