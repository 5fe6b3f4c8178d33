// The settings page (/settings): the signed-in user's API keys (settings-api-keys.ts), their
// default search context (settings-context.ts), their watches (settings-watches.ts, a chunk
// loaded here), their code host accounts (settings-accounts.ts) and, for owners, the
// organization's members (settings-members.ts). Settings belong to a user, so
// the page waits for the session check: someone not signed in (the anonymous user has no
// keys) is asked to sign in, and the page draws itself once they have.

import { h } from './dom.ts';
import { requireSignIn, session, type SessionState } from './session.ts';
import { apiKeysSection } from './settings-api-keys.ts';
import { linkedAccountsSection } from './settings-accounts.ts';
import { defaultContextSection } from './settings-context.ts';
import { membersSection } from './settings-members.ts';

export async function settingsPage(main: HTMLElement, sessionChecked: Promise<SessionState>): Promise<void> {
  document.title = 'Settings · trawl';
  main.replaceChildren(h('h1', {}, 'Settings'), h('p', { class: 'status', role: 'status' }, 'Loading your settings…'));
  const state = await sessionChecked;
  if (state.authenticated && state.user) return draw(main);
  const signIn = async (): Promise<void> => {
    if (await requireSignIn('Settings belong to a user: sign in to see them.')) draw(main);
  };
  main.replaceChildren(
    h('h1', {}, 'Settings'),
    h(
      'p',
      { class: 'notice', id: 'settings-signin' },
      'Your settings (your API keys, and for owners the members) are shown once you are signed in. ',
      h('button', { type: 'button', class: 'link', onclick: () => void signIn() }, 'Sign in'),
    ),
  );
  // Asked at once: there is nothing else to do here. Without anonymous access the session
  // check has opened the dialog already (main.ts), and this waits for the same one.
  await signIn();
}

function draw(main: HTMLElement): void {
  const user = session().user!;
  main.replaceChildren(
    h('h1', {}, 'Settings'),
    h(
      'p',
      { class: 'settings-who' },
      'Signed in as ',
      h('strong', {}, user.name || user.email || user.id),
      user.email && user.name ? ` (${user.email})` : '',
      `, ${user.role}.`,
    ),
    apiKeysSection(),
    defaultContextSection(),
    watchesSlot(),
    linkedAccountsSection(user.id),
    ...(user.role === 'owner' ? [membersSection(user.id)] : []),
  );
}

/** The watches' section, once its chunk has loaded (the search page, which shares the entry script, never loads it). */
function watchesSlot(): HTMLElement {
  const slot = h(
    'section',
    { class: 'settings-section', id: 'watches', 'aria-labelledby': 'watches-title' },
    h('h2', { id: 'watches-title' }, 'Watches'),
    h('p', { class: 'status', role: 'status' }, 'Loading your watches…'),
  );
  import('./settings-watches.ts').then(
    (m) => slot.replaceWith(m.watchesSection()),
    (err: Error) => slot.append(h('p', { class: 'notice error', role: 'alert' }, `The watches could not be shown: ${err.message}`)),
  );
  return slot;
}
