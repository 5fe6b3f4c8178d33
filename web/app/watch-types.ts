// What the watches' endpoints answer (daemon/http/schemas/watches.ts: Watch, WatchEvent),
// as the settings page reads it.

export interface Watch {
  id: number;
  name: string;
  query: string;
  isRegexEnabled: boolean;
  isCaseSensitivityEnabled: boolean;
  url?: string;
  owner: string;
  createdAt: string;
  /** When its matches last changed; absent: never since it was made. */
  lastChangedAt?: string;
  delivered: number;
  deadLetters: number;
  /** Only in the answer that creates a watch with a url. */
  secret?: string;
}

export interface WatchMatch {
  path: string;
  /** 1-based; 0 for a file matched by its name alone. */
  line: number;
  text: string;
}

export interface WatchEvent {
  id: number;
  at: string;
  repository: { id: number; name: string; commit?: string };
  added: WatchMatch[];
  removed: WatchMatch[];
  delivery?: { state: 'pending' | 'delivered' | 'dead' | 'withheld'; attempts: number; nextAttemptAt?: string; lastError?: string };
}
