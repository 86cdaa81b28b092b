import { createHash, randomBytes } from 'node:crypto';
import { API_TOKEN_PREFIX, type TokenScope } from '@lockstep/contract';
import type { Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { ApiTokenTable } from '../db/schema';

/** Characters of a token kept to recognise it in the list (`lst_` and 8 of its random part). */
const SHOWN_PREFIX = API_TOKEN_PREFIX.length + 8;
/** last_used_at is written at most this often per token, not on every request. */
const LAST_USED_EVERY_MS = 60_000;

export const hashApiToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

export const isApiToken = (token: string) => token.startsWith(API_TOKEN_PREFIX);

/** A new token: 32 random bytes; only its hash and first characters are stored. */
export async function createApiToken(db: Db, ownerId: string, name: string, scopes: TokenScope[]) {
  const token = `${API_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  const row = await db
    .insertInto('api_token')
    .values({
      owner_id: ownerId,
      name,
      scopes,
      token_hash: hashApiToken(token),
      prefix: token.slice(0, SHOWN_PREFIX),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { row, token };
}

export const toApiToken = (r: Selectable<ApiTokenTable>) => ({
  id: r.id,
  name: r.name,
  scopes: r.scopes as TokenScope[],
  prefix: r.prefix,
  createdAt: new Date(r.created_at).toISOString(),
  lastUsedAt: r.last_used_at ? new Date(r.last_used_at).toISOString() : null,
});

/** The live (not revoked) token with this value, its last use recorded; null when there is none. */
export async function useApiToken(db: Db, token: string) {
  const row = await db
    .selectFrom('api_token')
    .select(['id', 'owner_id', 'scopes', 'last_used_at'])
    .where('token_hash', '=', hashApiToken(token))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  const now = new Date();
  if (!row.last_used_at || now.getTime() - new Date(row.last_used_at).getTime() > LAST_USED_EVERY_MS)
    await db.updateTable('api_token').set({ last_used_at: now }).where('id', '=', row.id).execute();
  return { id: row.id, userId: row.owner_id, scopes: row.scopes as TokenScope[] };
}
