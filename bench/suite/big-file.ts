// A long, realistic source file for the code viewer's benchmark (phase-web.ts) and its
// end-to-end test: TypeScript in sections of 50 lines (a function each, so the outline has
// a symbol every 50 lines and the grammar has real work), every line distinct so that a
// line's number can be read off its text ("line 150000"). 200,000 lines make 10.2 MB, under
// the daemon's default limit for a file served whole (settings.http.maxSourceBytes, 10 MiB).

/** Lines per section: a function header, its body, its closing brace. */
const SECTION = 50;

/** `lines` lines of TypeScript, ending with a newline; line n mentions "line n". */
export function bigSource(lines: number): string {
  const out: string[] = [];
  for (let n = 1; n <= lines; n++) {
    const k = Math.floor((n - 1) / SECTION);
    const inSection = (n - 1) % SECTION;
    if (inSection === 0) out.push(`export function section${k}(input: number): number { // line ${n}`);
    else if (inSection === 1) out.push(`  let total = input + ${k}; // line ${n}`);
    else if (inSection === SECTION - 2) out.push(`  return total; // line ${n}`);
    else if (inSection === SECTION - 1) out.push(`} // line ${n}`);
    else out.push(`  total = (total * 31 + ${n}) % 97; // line ${n}`);
  }
  return `${out.join('\n')}\n`;
}
