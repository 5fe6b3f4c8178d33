#!/usr/bin/env node
// Entry point for `npx trawl`: the sources are TypeScript, run through tsx's loader.
import { register } from 'tsx/esm/api';
register();
await import('../daemon/cli/main.ts');
