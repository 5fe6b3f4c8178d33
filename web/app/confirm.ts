// A yes-or-no question before something that cannot be undone (revoking an API key): a
// modal <dialog>, so the rest of the page is inert while it is open, focus starts on the
// safe answer, Escape means no, and focus returns to where it was when it closes.

import { h } from './dom.ts';

/** Resolves true when the person chooses `confirmLabel`, false on Cancel or Escape. */
export function confirmAction(title: string, text: string, confirmLabel: string): Promise<boolean> {
  const before = document.activeElement instanceof HTMLElement ? document.activeElement : undefined;
  return new Promise<boolean>((resolve) => {
    const cancel = h('button', { type: 'button', class: 'link', onclick: () => finish(false) }, 'Cancel');
    const dialog = h(
      'dialog',
      { id: 'confirm', class: 'confirm', 'aria-labelledby': 'confirm-title', 'aria-describedby': 'confirm-text' },
      h('h2', { id: 'confirm-title' }, title),
      h('p', { id: 'confirm-text' }, text),
      h(
        'div',
        { class: 'actions' },
        cancel,
        h('button', { type: 'button', class: 'primary danger', id: 'confirm-yes', onclick: () => finish(true) }, confirmLabel),
      ),
    );
    let done = false;
    const finish = (yes: boolean) => {
      if (done) return;
      done = true;
      dialog.close();
      dialog.remove();
      // The caller moves focus on after a "yes"; after a "no" it goes back where it was.
      if (!yes) before?.focus();
      resolve(yes);
    };
    dialog.addEventListener('cancel', (e) => {
      e.preventDefault();
      finish(false);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}
