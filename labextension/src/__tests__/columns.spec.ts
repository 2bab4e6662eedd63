import { utf16Column } from '../columns';

describe('utf16Column: character columns to UTF-16 offsets', () => {
  it('is the identity on ASCII', () => {
    expect(utf16Column('y = x.sum(1)', 4)).toBe(4);
    expect(utf16Column('y = x.sum(1)', 0)).toBe(0);
  });

  it('counts a character of the Basic Multilingual Plane as one unit', () => {
    // é and λ are one UTF-16 unit each
    expect(utf16Column('é = λ.sum(1)', 4)).toBe(4);
  });

  it('counts a character outside it (an emoji) as two units', () => {
    const line = 's = "🔥"; y = x.sum(1)';
    expect(utf16Column(line, 13)).toBe(14);
    expect(line.slice(utf16Column(line, 13))).toBe('x.sum(1)');
  });

  it('clamps to the line', () => {
    expect(utf16Column('abc', -1)).toBe(0);
    expect(utf16Column('abc', 10)).toBe(3);
    expect(utf16Column('🔥', 5)).toBe(2);
  });

  it('counts a lone surrogate as one character', () => {
    expect(utf16Column('\ud83dx', 1)).toBe(1);
  });
});
