/**
 * porter's columns count characters (Unicode code points) of the line, as editors
 * and Python's `str` do; JavaScript strings, and so CodeMirror offsets, count UTF-16
 * code units, where a character outside the Basic Multilingual Plane (an emoji such as
 * 🔥) is two. Pure functions, without imports: tests/test_positions.py runs them.
 */

/**
 * The UTF-16 offset in `text` of character `col` (0-based, in code points), clamped to
 * the line: a negative column is 0, one past the end is the line's length.
 */
export function utf16Column(text: string, col: number): number {
  let units = 0;
  for (let chars = 0; chars < col && units < text.length; chars++) {
    const code = text.charCodeAt(units);
    const next = units + 1 < text.length ? text.charCodeAt(units + 1) : 0;
    const pair =
      code >= 0xd800 && code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
    units += pair ? 2 : 1;
  }
  return units;
}
