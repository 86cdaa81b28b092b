// A small script against the client generated from the served document (generated/api.d.ts):
// it typechecks only while the document describes what the server answers, errors included.
import createClient from 'openapi-fetch';
import type { components, paths } from './generated/api';

type ErrorEnvelope = components['schemas']['ErrorEnvelope'];

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000' });

/** What a person is told when a call fails: the envelope's text, whichever status it came with. */
export function userFacing(error: ErrorEnvelope): string {
  const text = error.response.userFacingMessage;
  return Array.isArray(text) ? text.join(' ') : (text ?? error.message);
}

export async function syncNames(token: string): Promise<string[]> {
  const headers = { authorization: `Bearer ${token}` };
  const { data, error } = await client.GET('/rest/core-bases', { headers, params: { query: { take: 20 } } });
  if (error) throw new Error(userFacing(error));
  return data.items.map((base) => base.name);
}

export async function renameSync(token: string, id: string, name: string): Promise<string> {
  const { data, error, response } = await client.PATCH('/rest/core-bases/{id}', {
    headers: { authorization: `Bearer ${token}` },
    params: { path: { id } },
    body: { name },
  });
  if (error)
    throw new Error(`${response.status}: ${userFacing(error)} (${error.statusCode} at ${error.path})`);
  return data.name;
}

export async function signIn(email: string, password: string): Promise<string | null> {
  const { data, error } = await client.POST('/api/auth/sign-in/email', { body: { email, password } });
  if (error) throw new Error(userFacing(error));
  return data.token;
}

export async function issueToken(): Promise<string> {
  const { data, error } = await client.GET('/api/auth/token');
  if (error) throw new Error(userFacing(error));
  return data.token;
}

/** The open issues of one sync, with the typed filters (not JSON inside a string). */
export async function openIssues(token: string, coreBaseId: string): Promise<string[]> {
  const { data, error } = await client.GET('/rest/sync-errors', {
    headers: { authorization: `Bearer ${token}` },
    params: { query: { coreBaseId, status: 'open', side: 'right', take: 50 } },
  });
  if (error) throw new Error(userFacing(error));
  return data.items.map((issue) => `${issue.recordName ?? issue.remoteId}: ${issue.userFacingMessage}`);
}

/** The syncs that are on and pinned, filtered by the server. */
export async function pinnedSyncsOn(token: string): Promise<number> {
  const { data, error } = await client.GET('/rest/core-bases', {
    headers: { authorization: `Bearer ${token}` },
    params: { query: { syncState: 'on', pinned: 'true', name: 'crm' } },
  });
  if (error) throw new Error(userFacing(error));
  return data.total;
}
