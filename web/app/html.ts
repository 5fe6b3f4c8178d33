// Text made safe to put inside HTML markup (an element's content or a quoted attribute):
// the one place the pages build HTML from strings (syntax.ts, diff-lines.ts, blame), and
// free of the DOM, so that Node tests can run what uses it.

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
