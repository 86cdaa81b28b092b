import { assertHostAllowed, ConnectorError } from '@lockstep/connectors';
import type { GitRepositoryInput } from '@lockstep/contract';
import type { Config } from '../config';
import { HttpError } from '../http/http-error';
import type { SecretBox } from '../services/secret-box';
import { assertRepositoryAllowed, type GitSyncRow } from './store';

/** A repository the server may use: a local path in local mode only, an HTTPS host on the public internet. */
export async function assertGitRepositoryInput(r: GitRepositoryInput, config: Config) {
  assertRepositoryAllowed(r.kind, config);
  if (r.kind === 'local') {
    if (!r.path.startsWith('/'))
      throw new HttpError(400, 'Not an absolute path', 'Give the repository’s absolute path.', 'validation');
    return;
  }
  try {
    await assertHostAllowed(new URL(r.url).hostname, {
      allowPrivate: config.environment === 'local' || config.environment === 'test',
    });
  } catch (error) {
    if (error instanceof ConnectorError)
      throw new HttpError(400, error.message, error.userFacingMessage, 'validation');
    throw error;
  }
}

/** The columns of a repository; a patch without a token keeps the stored one for the same URL. */
export function sealRepository(r: GitRepositoryInput, previous: GitSyncRow | null, secretBox: SecretBox) {
  if (r.kind === 'local')
    return { repo_kind: 'local' as const, repo_path: r.path, repo_url: null, secret: null };
  let token = r.token ?? null;
  let username = r.username ?? null;
  if (!token && previous?.repo_kind === 'https' && previous.repo_url === r.url && previous.secret) {
    const old = secretBox.open<{ token: string | null; username: string | null }>(previous.secret);
    token = old.token;
    username = r.username ?? old.username;
  }
  return {
    repo_kind: 'https' as const,
    repo_url: r.url,
    repo_path: null,
    secret: token ? secretBox.seal({ token, username }) : null,
  };
}
