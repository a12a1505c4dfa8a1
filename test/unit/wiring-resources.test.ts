// A resource a caller provides (tests: an in-memory mailer) is still reached only through the group's needs.
import { describe, expect, it } from 'vitest';
import { config } from '#lib/platform/config/index.ts';
import type { Mail, Mailer } from '#lib/platform/mail/mailer.ts';
import { mailerOf } from '#lib/wiring/mail.ts';
import { groupResources, MissingNeedError } from '#lib/wiring/resources.ts';

const sent: Mail[] = [];
const memory: Mailer = { send: async (mail) => void sent.push(mail) };

describe('provided resources', () => {
  it('hands a group the provided resource instead of building one', () => {
    // Prepare
    const resources = groupResources('accounts', { mail: true }, config, { provided: { mail: memory } });

    // Act
    const mailer = mailerOf(resources);

    // Assess
    expect(mailer).toBe(memory);
  });

  it('refuses a provided resource the group does not declare, as a built one', () => {
    // Prepare
    const resources = groupResources('meta', { bucket: 'read' }, config, { provided: { mail: memory } });

    // Act
    const reach = () => mailerOf(resources);

    // Assess
    expect(reach).toThrow(MissingNeedError);
    expect(reach).toThrow('The meta function uses mail, which functions/meta/needs.ts does not declare');
  });
});
