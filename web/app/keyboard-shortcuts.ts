// Keyboard use: "/" focuses the query box from anywhere; Enter searches (the form); ↓ / ↑
// (or j / k) move through the result links, ↓ from the box goes to the first result and
// ↑ from the first goes back to the box; Enter on a result opens it (a plain link).

export function installKeyboardShortcuts(opts: { input: HTMLInputElement; links: () => HTMLAnchorElement[] }): void {
  document.addEventListener('keydown', (e) => {
    if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey) return;
    const target = e.target as HTMLElement;
    const typing = target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || target.isContentEditable;
    if (e.key === '/' && !typing) {
      e.preventDefault();
      opts.input.focus();
      opts.input.select();
      return;
    }
    if (target === opts.input && e.key === 'Escape') {
      opts.input.blur();
      return;
    }
    const down = e.key === 'ArrowDown' || (!typing && e.key === 'j');
    const up = e.key === 'ArrowUp' || (!typing && e.key === 'k');
    if (!down && !up) return;
    if (typing && target !== opts.input) return;
    const links = opts.links();
    if (links.length === 0) return;
    const at = links.indexOf(document.activeElement as HTMLAnchorElement);
    if (target === opts.input) {
      if (!down) return;
      e.preventDefault();
      focus(links[0]!);
      return;
    }
    if (at < 0) return;
    e.preventDefault();
    if (up && at === 0) opts.input.focus();
    else focus(links[Math.max(0, Math.min(links.length - 1, at + (down ? 1 : -1)))]!);
  });
}

function focus(link: HTMLAnchorElement): void {
  link.focus();
  link.closest('li')?.scrollIntoView({ block: 'nearest' });
}
