// Every schema of the API, by name: what the server validates with and openapi.ts
// publishes (the routes name them).

import type { Config } from '../../config/types.ts';
import { clusterSchemas } from './cluster.ts';
import { contextSchemas } from './contexts.ts';
import { auditSchemas } from './audit.ts';
import { browseSchemas } from './browse.ts';
import { commonSchemas, type JsonSchema } from './common.ts';
import { historySchemas } from './history.ts';
import { repoSchemas } from './repos.ts';
import { memberSchemas } from './members.ts';
import { permissionSchemas } from './permissions.ts';
import { scopedTokenSchemas } from './scoped-tokens.ts';
import { credentialSchemas } from './credentials.ts';
import { searchSchemas } from './search.ts';
import { sessionSchemas } from './session.ts';
import { watchSchemas } from './watches.ts';

/** Every schema of the API, with the configured bound of `matches`. */
export function apiSchemas(config: Config): Record<string, JsonSchema> {
  return {
    ...commonSchemas,
    ...searchSchemas(config.settings.search.maxMatches),
    ...browseSchemas,
    ...historySchemas,
    ...repoSchemas,
    ...memberSchemas,
    ...scopedTokenSchemas,
    ...auditSchemas,
    ...sessionSchemas,
    ...credentialSchemas,
    ...clusterSchemas,
    ...permissionSchemas,
    ...contextSchemas,
    ...watchSchemas,
  };
}
