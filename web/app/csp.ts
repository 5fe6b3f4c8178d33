// The style nonce of this page (daemon/web/handler.ts): the shell's policy allows inline
// <style> elements only with it, and CodeMirror writes its own. Browsers hide a nonce from
// getAttribute once the page has loaded; the element's `nonce` property still has it.

export function styleNonce(): string | undefined {
  return document.querySelector<HTMLScriptElement>('script[nonce]')?.nonce || undefined;
}
