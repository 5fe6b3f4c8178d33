// Why a single sign-on did not sign someone in: one word for each reason, which the
// callback sends the browser back to the web UI with (`?signInError=<reason>&provider=<name>`),
// and the sentence the page shows for it. Words rather than sentences travel in the
// address, so that a link made by someone else cannot put text of theirs on trawl's page.
// Nothing else here: the web UI's bundle imports it.

export const SIGN_IN_REFUSALS = {
  unverified_email: 'Your email address at {provider} is not verified. Verify it there, then sign in again.',
  no_email: '{provider} did not say what your email address is, so trawl cannot tell which member you are.',
  domain_not_allowed: 'People of your email domain are not made members here at sign-in. Ask an owner to add you.',
  not_a_member: 'You are not a member of this server, and members are not added at sign-in here. Ask an owner to add you.',
  suspended: 'Your membership is suspended. Ask an owner.',
  denied: 'Signing in was cancelled at {provider}.',
  expired: 'The sign-in took too long, or was started in another browser or tab. Try again.',
  replayed: 'This sign-in was used already. Sign in again.',
  provider_error: '{provider} did not answer as expected. Try again; if it goes on, tell an owner (the server log says more).',
} as const;

export type SignInRefusal = keyof typeof SIGN_IN_REFUSALS;

export function isSignInRefusal(word: string): word is SignInRefusal {
  return Object.hasOwn(SIGN_IN_REFUSALS, word);
}

/** The sentence for `reason`, naming the provider as its button does. */
export function refusalText(reason: SignInRefusal, provider: string): string {
  return SIGN_IN_REFUSALS[reason].replaceAll('{provider}', provider);
}
