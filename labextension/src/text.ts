/**
 * The one way porter's views put report strings on the page: as text nodes, never as
 * HTML. Cell sources, variable names, error messages and backend reasons come from the
 * person's code and from the libraries it ran, so they may hold markup (`<script>`,
 * `<img onerror>`) or bidirectional-override controls that make code read differently
 * from what runs ("Trojan Source"). Markup stays inert because nothing here parses
 * HTML; bidi controls are replaced by a visible marker naming the code point.
 */

/** Bidi embedding/override/isolate controls and the invisible direction marks. */
const BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g;

const BIDI_NAMES: Record<string, string> = {
  '\u202A': 'LEFT-TO-RIGHT EMBEDDING',
  '\u202B': 'RIGHT-TO-LEFT EMBEDDING',
  '\u202C': 'POP DIRECTIONAL FORMATTING',
  '\u202D': 'LEFT-TO-RIGHT OVERRIDE',
  '\u202E': 'RIGHT-TO-LEFT OVERRIDE',
  '\u2066': 'LEFT-TO-RIGHT ISOLATE',
  '\u2067': 'RIGHT-TO-LEFT ISOLATE',
  '\u2068': 'FIRST STRONG ISOLATE',
  '\u2069': 'POP DIRECTIONAL ISOLATE',
  '\u200E': 'LEFT-TO-RIGHT MARK',
  '\u200F': 'RIGHT-TO-LEFT MARK',
  '\u061C': 'ARABIC LETTER MARK'
};

/** `U+202E` for one character. */
export function codePoint(ch: string): string {
  return 'U+' + ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
}

/** True where the text holds a bidi control. */
export function hasBidi(text: string): boolean {
  BIDI.lastIndex = 0;
  return BIDI.test(text);
}

/**
 * The text with every bidi control written out as `⟨U+202E⟩`: for places that take a
 * plain string (a title attribute, a hover tooltip, an editor diagnostic).
 */
export function visibleText(value: unknown): string {
  const text = value === null || value === undefined ? '' : String(value);
  return text.replace(BIDI, ch => `⟨${codePoint(ch)}⟩`);
}

/**
 * Append `value` to `parent` as text; each bidi control becomes a marked span
 * `⟨U+202E⟩` (class `porter-bidi`, its name in the title) so that a reader sees it.
 */
export function appendText(parent: Node, value: unknown): void {
  const text = value === null || value === undefined ? '' : String(value);
  let last = 0;
  BIDI.lastIndex = 0;
  for (let m = BIDI.exec(text); m !== null; m = BIDI.exec(text)) {
    if (m.index > last) {
      parent.appendChild(document.createTextNode(text.slice(last, m.index)));
    }
    const mark = document.createElement('span');
    mark.className = 'porter-bidi';
    mark.title = `${codePoint(m[0])} ${BIDI_NAMES[m[0]] ?? ''}`.trim();
    mark.textContent = `⟨${codePoint(m[0])}⟩`;
    parent.appendChild(mark);
    last = m.index + m[0].length;
  }
  if (last < text.length) {
    parent.appendChild(document.createTextNode(text.slice(last)));
  }
}

/** An element with a class and, optionally, text (through `appendText`). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: unknown
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    appendText(node, text);
  }
  return node;
}

/** A number as the reports print it: three significant digits, `—` when missing. */
export function num(value: unknown): string {
  if (value === null || value === undefined) {
    return '—';
  }
  if (typeof value === 'string') {
    return value; // "inf", "-inf", "nan" travel as strings
  }
  if (typeof value !== 'number') {
    return String(value);
  }
  if (Number.isInteger(value)) {
    return String(value);
  }
  return Number(value.toPrecision(3)).toString();
}

export function yesNo(value: boolean | null | undefined): string {
  return value === null || value === undefined ? '—' : value ? 'yes' : 'no';
}
