import { z } from 'zod';
import type { Db } from '../../db/database';
import type { Principal } from '../../http/context';
import { notFound } from '../../http/http-error';

export const TokenParams = z.object({ id: z.string().uuid('must be a token id (a UUID)') });
export const WebhookParams = z.object({ id: z.string().uuid('must be a webhook subscription id (a UUID)') });

/** A subscription of the signed-in user's own (personal, like tokens: staff see only theirs too). */
export async function findSubscription(db: Db, principal: Principal, id: string) {
  const row = await db
    .selectFrom('webhook_subscription')
    .selectAll()
    .where('id', '=', id)
    .where('owner_id', '=', principal.userId)
    .executeTakeFirst();
  if (!row) throw notFound('Webhook subscription');
  return row;
}
