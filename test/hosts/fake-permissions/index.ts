// The permission fakes by host type: each answers its host's permission API in the host's
// real shape (paths, pagination, credentials) from the data set's readers (FakeRepo.readers)
// and accounts (FakeAccount). A type without one answers no permission request.

import type { Env, PermissionApi } from '../fake-http.ts';
import type { FakeKind } from '../fake-hosts.ts';
import { azureDevOpsPermissions } from './azuredevops.ts';
import { bitbucketCloudPermissions } from './bitbucketCloud.ts';
import { bitbucketServerPermissions } from './bitbucketServer.ts';
import { gerritPermissions } from './gerrit.ts';
import { giteaPermissions } from './gitea.ts';
import { githubPermissions } from './github.ts';
import { gitlabPermissions } from './gitlab.ts';

export const PERMISSION_FAKES: Partial<Record<FakeKind, (env: Env) => PermissionApi>> = {
  github: githubPermissions,
  gitlab: gitlabPermissions,
  gitea: giteaPermissions,
  gerrit: gerritPermissions,
  bitbucketCloud: bitbucketCloudPermissions,
  bitbucketServer: bitbucketServerPermissions,
  azuredevops: azureDevOpsPermissions,
};
