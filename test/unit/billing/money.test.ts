// Yuan <-> cents conversion: exact string arithmetic, strict rejection of anything that is not plain yuan.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { centsToYuan, InvalidAmountError, yuanToCents } from '#lib/billing/channels/money.ts';

describe('yuanToCents', () => {
  it.each([
    ['1', 100],
    ['1.0', 100],
    ['1.00', 100],
    ['12.3', 1230],
    ['12.30', 1230],
    ['0.01', 1],
    ['0', 0],
    ['0.1', 10],
    ['100000000.00', 10_000_000_000],
    ['0019.99', 1999],
  ])('reads %s yuan as %i cents', (text, cents) => {
    // Act
    const result = yuanToCents(text);

    // Assess
    expect(result).toBe(cents);
  });

  it.each([
    '1.001',
    '-1',
    '-0.01',
    '+1',
    '1e2',
    '1.',
    '.5',
    '',
    ' 1',
    '1 ',
    '1,00',
    'abc',
    '0x10',
    'NaN',
    'Infinity',
    '1.0.0',
    '１',
    '99999999999999.00',
  ])('rejects %j', (text) => {
    // Act + Assess
    expect(yuanToCents(text)).toBeUndefined();
  });

  it('rejects a value that is not a string at all', () => {
    // Prepare
    const notText = 12.3 as unknown as string;

    // Act + Assess
    expect(yuanToCents(notText)).toBeUndefined();
  });

  it('does not suffer the float rounding of 0.1 + 0.2 style amounts', () => {
    // Act
    const cents = yuanToCents('19.99')! + yuanToCents('0.01')!;

    // Assess
    expect(cents).toBe(2000);
  });
});

describe('centsToYuan', () => {
  it.each([
    [0, '0.00'],
    [1, '0.01'],
    [10, '0.10'],
    [100, '1.00'],
    [1230, '12.30'],
    [10_000_000_000, '100000000.00'],
  ])('writes %i cents as %s', (cents, text) => {
    // Act
    const result = centsToYuan(cents);

    // Assess
    expect(result).toBe(text);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])('rejects %d', (cents) => {
    // Act + Assess
    expect(() => centsToYuan(cents)).toThrow(InvalidAmountError);
  });

  it('round-trips every cent amount through its yuan string', () => {
    // Prepare / Act / Assess
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 999_999_999_999 }), (cents) => {
        expect(yuanToCents(centsToYuan(cents))).toBe(cents);
      }),
    );
  });
});
