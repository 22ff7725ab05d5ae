// The contract's own checks (src/tokens.ts): what the extension accepts as a request id.

import { describe, expect, it } from 'vitest';

import { isRequestId } from '../src/tokens';

describe('isRequestId', () => {
  it('accepts 16 lowercase hex digits, as the kernel makes request ids', () => {
    // Given an id as the kernel makes them
    // Then it is one
    expect(isRequestId('0123456789abcdef')).toBe(true);
  });

  it('refuses anything else a saved notebook or a server answer could hold', () => {
    // Given values a crafted output could carry in place of an id
    const others: unknown[] = [
      '0123456789ABCDEF',
      '0123456789abcde',
      '0123456789abcdef0',
      '../../etc/passwd',
      '0123456789abcdef\n',
      16,
      null,
      undefined,
      { id: '0123456789abcdef' }
    ];
    // Then none of them is taken for a request id
    expect(others.filter(value => isRequestId(value))).toEqual([]);
  });
});
