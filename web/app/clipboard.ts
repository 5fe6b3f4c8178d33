// Copying a text for the person (a new API key, a commit's hash). The Clipboard API exists
// only in secure contexts (https, or loopback) and the browser may refuse it; then the
// text is selected instead, for Ctrl+C (⌘C).

/** Puts `text` on the clipboard and says true; where the page may not, runs `select` and says false. */
export async function copyText(text: string, select: () => void): Promise<boolean> {
  try {
    if (!window.isSecureContext || !navigator.clipboard) throw new Error('no clipboard');
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    select();
    return false;
  }
}
