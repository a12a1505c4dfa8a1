// Fail-fast checks for the plain (non-key) channel settings; errors name the field, never its value.
import { ChannelConfigError } from './errors.ts';

/** A non-empty identifier such as an app id, merchant id or certificate serial, trimmed. */
export function requireSetting(field: string, value: string | undefined): string {
  if (typeof value !== 'string' || value.trim() === '') throw new ChannelConfigError(field, 'is required');
  return value.trim();
}

/** An optional http(s) URL; blank counts as absent so a cleared admin field falls back to the default. */
export function optionalHttpUrl(field: string, value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new ChannelConfigError(field, 'is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ChannelConfigError(field, 'must be an http or https URL');
  }
  return value.trim();
}

export function requireHttpUrl(field: string, value: string | undefined): string {
  const url = optionalHttpUrl(field, value);
  if (url === undefined) throw new ChannelConfigError(field, 'is required');
  return url;
}
