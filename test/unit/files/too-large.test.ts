// The 413 a client shows its user: the limit in the unit the settings use, and the exact bytes.
import { describe, expect, it } from 'vitest';
import { fileTooLarge } from '#lib/files/errors.ts';

describe('the "too large" message', () => {
  it('names a whole-mebibyte limit in MiB and in bytes', () => {
    expect(fileTooLarge(4 * 1024 * 1024).message).toBe('file: larger than 4 MiB (4194304 bytes)');
    expect(fileTooLarge(100 * 1024 * 1024).message).toBe('file: larger than 100 MiB (104857600 bytes)');
  });

  it('names any other limit in bytes, and carries the limit for the envelope', () => {
    const error = fileTooLarge(4096);
    expect(error.message).toBe('file: larger than 4096 bytes');
    expect(error.limitBytes).toBe(4096);
  });
});
