// Whether a query names its search context itself (`context:`), read by the search page
// (the selector's context is then not sent: the server would refuse two) and by "Watch this
// query" (watch-link.ts). Free of the DOM, so that Node tests can run what uses it.

export function namesContext(query: string): boolean {
  return /(?:^|\s)context:/.test(query);
}
