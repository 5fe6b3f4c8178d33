// Size budgets of a tool's answer. A language model reads the text of every result into
// its context, so a result is capped however large the REST answer is, and says how to get
// the rest (a continuation hint naming the argument to change). structuredContent is
// capped as well, since some clients hand it to the model instead of the text.

/** Characters of a result's text, hints included. */
export const TEXT_BUDGET = 20_000;
/** Characters of the JSON of a result's structuredContent (lists are cut to fit). */
export const STRUCTURED_BUDGET = 100_000;
/** A longer line of code is cut (minified files would fill the budget with one line). */
export const MAX_LINE_CHARS = 1_000;
/** Room kept for the continuation hints at the end of the text. */
const HINT_RESERVE = 800;

/** A line cut to `max` characters, saying how much was left out. */
export function clip(line: string, max = MAX_LINE_CHARS): string {
  if (line.length <= max) return line;
  let end = max;
  // Never split a surrogate pair: half a character is not valid text.
  const code = line.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${line.slice(0, end)}… [line cut: ${line.length - end} more characters]`;
}

/** The text of a result, built line by line within TEXT_BUDGET. */
export class TextBudget {
  private readonly lines: string[] = [];
  private used = 0;
  private readonly limit: number;

  constructor(total = TEXT_BUDGET) {
    this.limit = total - HINT_RESERVE;
  }

  /** Whether `lines` would fit. */
  fits(lines: readonly string[]): boolean {
    return this.used + size(lines) <= this.limit;
  }

  /** Adds all of `lines` if they fit, else none; whether they were added. */
  add(...lines: string[]): boolean {
    if (!this.fits(lines)) return false;
    this.lines.push(...lines);
    this.used += size(lines);
    return true;
  }

  /** Adds the leading lines that fit; how many. */
  addSome(lines: Iterable<string>): number {
    let n = 0;
    for (const line of lines) {
      if (!this.add(line)) break;
      n++;
    }
    return n;
  }

  /**
   * Adds blocks (a file's lines, ...) in order while each fits whole; the first block is
   * cut to fit rather than left out, so a result never shows nothing. Blocks are made on
   * demand: a large answer is not rendered beyond what fits. `shown` counts the blocks at
   * least partly in the text; `cut` says the last of them was cut.
   */
  addBlocks(count: number, block: (i: number) => string[]): { shown: number; cut: boolean } {
    for (let i = 0; i < count; i++) {
      const lines = block(i);
      if (this.add(...lines)) continue;
      if (i > 0) return { shown: i, cut: false };
      this.addSome(lines);
      return { shown: 1, cut: true };
    }
    return { shown: count, cut: false };
  }

  /** The text, with the hints (one per line, after a blank line when there are any). */
  text(hints: readonly string[] = []): string {
    const body = this.lines.join('\n');
    const all = hints.length === 0 ? body : `${body}\n\n${hints.map((h) => `… ${h}`).join('\n')}`;
    // Hints name paths and queries: one that is very long must not break the budget.
    return all.length <= TEXT_BUDGET ? all : `${all.slice(0, TEXT_BUDGET - 1)}…`;
  }
}

function size(lines: readonly string[]): number {
  return lines.reduce((n, l) => n + l.length + 1, 0);
}

/**
 * How many leading `items` (at most `max`) fit in STRUCTURED_BUDGET when they are the
 * list of `container` (its JSON with an empty list is `base`). Counted exactly as
 * JSON.stringify writes the list: the items and the commas between them.
 */
export function structuredPrefix(base: object, items: readonly unknown[], max = items.length): number {
  let used = JSON.stringify(base).length;
  for (let i = 0; i < max; i++) {
    used += JSON.stringify(items[i]).length + (i > 0 ? 1 : 0);
    if (used > STRUCTURED_BUDGET) return i;
  }
  return max;
}
