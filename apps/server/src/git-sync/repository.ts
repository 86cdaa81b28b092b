import fs, { existsSync, promises as fsp, statSync } from 'node:fs';
import path from 'node:path';
import { assertHostAllowed } from '@lockstep/connectors';
import git, { type HttpClient } from 'isomorphic-git';
import nodeHttp from 'isomorphic-git/http/node';

/** A repository failure the user can act on (not found, refused, moved on): the run fails with this text. */
export class GitSyncError extends Error {}

export type RepoSpec =
  | { kind: 'local'; path: string }
  | { kind: 'https'; url: string; token: string | null; username: string | null };

export const AUTHOR = { name: 'Lockstep', email: 'git-sync@lockstep.invalid' };

/**
 * isomorphic-git's Node HTTP client, each request's host checked by the SSRF guard first (outside
 * local mode, a repository URL may not lead into Lockstep's own network).
 */
function guardedHttp(allowPrivate: boolean): HttpClient {
  return {
    async request(req) {
      await assertHostAllowed(new URL(req.url).hostname, { allowPrivate });
      return nodeHttp.request(req);
    },
  };
}

/**
 * One repository as a git sync uses it: its branch head, files at a commit, and new commits on the
 * branch. A local repository is used in place (its git directory: a bare repository, or a working
 * copy's .git); an HTTPS one through a bare clone kept under the data directory, fetched before
 * reading and pushed after committing (a push that is not a fast-forward is refused, so a commit
 * made meanwhile is never overwritten).
 */
export type Repository = {
  /** The branch head (fetched first for HTTPS); null when the branch has no commit yet. */
  head(): Promise<string | null>;
  /** Files under `folder` at a commit, by path relative to the folder. */
  readFolder(commit: string, folder: string): Promise<Map<string, Uint8Array>>;
  /** Whether `ancestor` is `commit` or one of its ancestors. */
  contains(commit: string, ancestor: string): Promise<boolean>;
  /**
   * A commit on top of `parent` whose `folder` holds exactly `files` (the rest of the tree kept);
   * the branch moves to it (pushed for HTTPS). Null when the tree would not change.
   */
  commitFolder(
    parent: string | null,
    folder: string,
    files: Map<string, Uint8Array>,
    message: string,
  ): Promise<string | null>;
};

export async function openRepository(
  spec: RepoSpec,
  branch: string,
  options: { cacheDir: string; allowPrivate: boolean },
): Promise<Repository> {
  let gitdir: string;
  const http = guardedHttp(options.allowPrivate);
  const onAuth = () =>
    spec.kind === 'https' && spec.token
      ? { username: spec.username ?? 'x-access-token', password: spec.token }
      : undefined;
  const remoteRef = `refs/remotes/origin/${branch}`;
  if (spec.kind === 'local') {
    gitdir = localGitdir(spec.path);
    // A working copy with this branch checked out: moving the branch under it would leave its
    // files behind the branch (git itself refuses to push into a checked-out branch).
    if (gitdir !== spec.path) {
      const current = await git.currentBranch({ fs, gitdir, fullname: false }).catch(() => undefined);
      if (current === branch)
        throw new GitSyncError(
          `The branch ${branch} is checked out in ${spec.path}. Use a bare repository, or another branch.`,
        );
    }
  } else {
    gitdir = options.cacheDir;
    if (!existsSync(path.join(gitdir, 'HEAD'))) {
      await fsp.mkdir(gitdir, { recursive: true });
      await git.init({ fs, gitdir, bare: true, defaultBranch: branch });
    }
    await git.addRemote({ fs, gitdir, remote: 'origin', url: spec.url, force: true });
  }

  const fetchHead = async (): Promise<string | null> => {
    if (spec.kind === 'local') {
      return git.resolveRef({ fs, gitdir, ref: `refs/heads/${branch}` }).catch(() => null);
    }
    try {
      await git.fetch({
        fs,
        http,
        gitdir,
        remote: 'origin',
        ref: branch,
        singleBranch: true,
        tags: false,
        onAuth,
        onAuthFailure: () => ({ cancel: true }),
      });
    } catch (error) {
      const e = error as { code?: string; message?: string; data?: { statusCode?: number } };
      // An empty repository, or one without this branch yet: the first upload makes it.
      if (e.code === 'NotFoundError' && !e.data?.statusCode) {
        await git.deleteRef({ fs, gitdir, ref: remoteRef }).catch(() => undefined);
        return null;
      }
      throw describeRemoteError(error, spec.url);
    }
    return git.resolveRef({ fs, gitdir, ref: remoteRef }).catch(() => null);
  };

  return {
    head: fetchHead,
    async readFolder(commit, folder) {
      const out = new Map<string, Uint8Array>();
      let tree: Awaited<ReturnType<typeof git.readTree>>;
      try {
        tree = await git.readTree({ fs, gitdir, oid: commit, filepath: folder });
      } catch (error) {
        if ((error as { code?: string }).code === 'NotFoundError') return out;
        throw error;
      }
      const walk = async (oid: string, prefix: string) => {
        const t = await git.readTree({ fs, gitdir, oid });
        for (const e of t.tree) {
          const p = prefix ? `${prefix}/${e.path}` : e.path;
          if (e.type === 'tree') await walk(e.oid, p);
          else if (e.type === 'blob') out.set(p, (await git.readBlob({ fs, gitdir, oid: e.oid })).blob);
        }
      };
      await walk(tree.oid, '');
      return out;
    },
    async contains(commit, ancestor) {
      if (commit === ancestor) return true;
      return git.isDescendent({ fs, gitdir, oid: commit, ancestor, depth: -1 }).catch(() => false);
    },
    async commitFolder(parent, folder, files, message) {
      const sub = await writeFiles(gitdir, files);
      const baseTree = parent ? (await git.readCommit({ fs, gitdir, oid: parent })).commit.tree : null;
      const tree = await splice(gitdir, baseTree, folder.split('/'), sub);
      if (tree === baseTree) return null;
      const now = Math.floor(Date.now() / 1000);
      const who = { ...AUTHOR, timestamp: now, timezoneOffset: 0 };
      const oid = await git.writeCommit({
        fs,
        gitdir,
        commit: { message, tree, parent: parent ? [parent] : [], author: who, committer: who },
      });
      if (spec.kind === 'local') {
        // Compare-and-set as far as a file ref allows: the branch must still be where the run read it.
        const current = await fetchHead();
        if (current !== parent)
          throw new GitSyncError(
            `The branch ${branch} moved while this run worked (a commit was made meanwhile). Run it again.`,
          );
        await git.writeRef({ fs, gitdir, ref: `refs/heads/${branch}`, value: oid, force: true });
        return oid;
      }
      await git.writeRef({ fs, gitdir, ref: `refs/heads/${branch}`, value: oid, force: true });
      try {
        const res = await git.push({
          fs,
          http,
          gitdir,
          remote: 'origin',
          ref: branch,
          remoteRef: branch,
          onAuth,
          onAuthFailure: () => ({ cancel: true }),
        });
        if (!res.ok)
          throw new GitSyncError(`The repository refused the push: ${res.error ?? 'unknown reason'}`);
      } catch (error) {
        if (error instanceof GitSyncError) throw error;
        const e = error as { code?: string };
        if (e.code === 'PushRejectedError')
          throw new GitSyncError(
            `The branch ${branch} moved while this run worked (a commit was pushed meanwhile). Run it again.`,
          );
        throw describeRemoteError(error, spec.url);
      }
      await git.writeRef({ fs, gitdir, ref: remoteRef, value: oid, force: true });
      return oid;
    },
  };
}

function localGitdir(p: string): string {
  if (!path.isAbsolute(p)) throw new GitSyncError('A local repository is given by its absolute path.');
  const isGitdir = (d: string) => existsSync(path.join(d, 'HEAD')) && existsSync(path.join(d, 'objects'));
  if (isGitdir(p)) return p;
  const dotGit = path.join(p, '.git');
  if (existsSync(dotGit) && statSync(dotGit).isDirectory() && isGitdir(dotGit)) return dotGit;
  throw new GitSyncError(`${p} is not a git repository.`);
}

function describeRemoteError(error: unknown, url: string): Error {
  const e = error as {
    code?: string;
    message?: string;
    data?: { statusCode?: number };
    userFacingMessage?: string;
  };
  if (e.userFacingMessage) return new GitSyncError(e.userFacingMessage);
  const status = e.data?.statusCode;
  if (e.code === 'UserCanceledError' || status === 401 || status === 403)
    return new GitSyncError(
      `The repository ${url} refused the token. Check it can read and write the repository.`,
    );
  if (status === 404) return new GitSyncError(`The repository ${url} was not found.`);
  return new GitSyncError(`The repository ${url} could not be reached: ${e.message ?? String(error)}`);
}

/** Blobs and trees for `files` (paths relative to one folder); the folder's tree id. */
async function writeFiles(gitdir: string, files: Map<string, Uint8Array>): Promise<string> {
  type Dir = { files: Map<string, Uint8Array>; dirs: Map<string, Dir> };
  const root: Dir = { files: new Map(), dirs: new Map() };
  for (const [p, content] of files) {
    const parts = p.split('/');
    const name = parts.pop() as string;
    let d = root;
    for (const part of parts) {
      let next = d.dirs.get(part);
      if (!next) {
        next = { files: new Map(), dirs: new Map() };
        d.dirs.set(part, next);
      }
      d = next;
    }
    d.files.set(name, content);
  }
  const write = async (d: Dir): Promise<string> => {
    const tree = [];
    for (const [name, content] of d.files)
      tree.push({
        mode: '100644',
        path: name,
        oid: await git.writeBlob({ fs, gitdir, blob: content }),
        type: 'blob' as const,
      });
    for (const [name, sub] of d.dirs)
      tree.push({ mode: '040000', path: name, oid: await write(sub), type: 'tree' as const });
    return git.writeTree({ fs, gitdir, tree });
  };
  return write(root);
}

/** `base` with the tree at `segments` replaced by `sub` (other entries kept). */
async function splice(gitdir: string, base: string | null, segments: string[], sub: string): Promise<string> {
  const [first, ...rest] = segments;
  if (first === undefined) return sub;
  const entries = base ? (await git.readTree({ fs, gitdir, oid: base })).tree : [];
  const existing = entries.find((e) => e.path === first);
  const child = await splice(gitdir, existing?.type === 'tree' ? existing.oid : null, rest, sub);
  const tree = entries.filter((e) => e.path !== first);
  tree.push({ mode: '040000', path: first, oid: child, type: 'tree' });
  return git.writeTree({ fs, gitdir, tree });
}
