import type { AppContext, RestApp } from '../http/context';
import { forceError } from './debug/force-error';
import { assignPlan } from './users/assign-plan';
import { choosePlan } from './users/choose-plan';
import { deleteUser } from './users/delete-user';
import { getCurrentUser } from './users/get-current-user';
import { getKnownFlags } from './users/get-known-flags';
import { getLimitData } from './users/get-limit-data';
import { getUser } from './users/get-user';
import { putUserFlags } from './users/put-user-flags';
import { searchUsers } from './users/search-users';

/** Every /rest route, one per file. */
export function registerRestRoutes(app: RestApp, ctx: AppContext) {
  for (const register of [
    getCurrentUser,
    getLimitData,
    choosePlan,
    searchUsers,
    getUser,
    deleteUser,
    assignPlan,
    putUserFlags,
    getKnownFlags,
    forceError,
  ]) {
    register(app, ctx);
  }
}
