// Whether the installed license grants an entitlement now, cheaply enough to ask on every
// request: the license text is read from the store each time (so an install or removal
// takes effect at once, in every process sharing the store), but its signature is checked
// only when the text changes. Expiry is judged at each call.

import { hasEntitlement, licenseState, type License } from './license.ts';
import { licenseFromText } from './license-store.ts';
import type { LicenseStore } from '../store/store.ts';

export class Entitlements {
  #checked = false;
  #text: string | undefined;
  #license: License | undefined;
  /** Why there is no usable license (when #license is undefined). */
  #reason = '';

  constructor(
    private readonly store: LicenseStore,
    private readonly keys: string[],
    private readonly now: () => Date,
  ) {}

  /** Why `name` is not available now, or undefined when the license grants it. */
  async missing(name: string): Promise<string | undefined> {
    await this.refresh();
    const now = this.now();
    if (!this.#license) return this.#reason;
    const state = licenseState(this.#license, now);
    if (!state.active) return state.reason;
    return hasEntitlement(this.#license, name, now) ? undefined : `the installed license does not include the "${name}" entitlement`;
  }

  private async refresh(): Promise<void> {
    const text = await this.store.getLicense();
    if (this.#checked && text === this.#text) return;
    this.#checked = true;
    this.#text = text;
    const { license, reason } = licenseFromText(text, this.keys);
    this.#license = license;
    this.#reason = reason ?? '';
  }
}
