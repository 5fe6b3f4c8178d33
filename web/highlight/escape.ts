// HTML escaping of a slice of a line. The code view puts the highlighter's output into
// innerHTML unchanged, so this is the one place that stands between file content and
// markup: every character that could end a text node or an attribute value (& < > " ')
// is replaced, everything else is copied as is.

/** `text[a, b)` with & < > " ' replaced by entities. Copies unescaped runs as slices. */
export function escapeRange(text: string, a: number, b: number): string {
  let out = '';
  let last = a;
  for (let i = a; i < b; i++) {
    const c = text.charCodeAt(i);
    // All five specials are <= '>' (62): one comparison rejects letters and most symbols.
    if (c > 62) continue;
    let rep: string;
    if (c === 38) rep = '&amp;';
    else if (c === 60) rep = '&lt;';
    else if (c === 62) rep = '&gt;';
    else if (c === 34) rep = '&quot;';
    else if (c === 39) rep = '&#39;';
    else continue;
    if (i > last) out += text.slice(last, i);
    out += rep;
    last = i + 1;
  }
  if (last === a) return a === 0 && b === text.length ? text : text.slice(a, b);
  return last < b ? out + text.slice(last, b) : out;
}

/** The whole string, escaped. */
export function escapeHtml(text: string): string {
  return escapeRange(text, 0, text.length);
}
