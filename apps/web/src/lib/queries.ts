import {
  type CurrentUser,
  DEV_PLAN,
  LIMIT_DATA_REFRESH_MS,
  type LimitData,
  NO_PLAN_DISPLAY_NAME,
  type PlanList,
  type Subscription,
} from '@lockstep/contract';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api } from './api';
import { readDevFlag } from './dev-mode';
import { useSession } from './session';
import type { SupportChatSettings } from './support-chat';

export type AppConfig = {
  environment: 'local' | 'test' | 'staging' | 'production';
  supportEmail: string;
  pricingUrl: string;
  oidcProviders: string[];
  /** Plans can be bought on this server (Stripe is set up). */
  payments: boolean;
  /** PostHog, when the server has a key (started in staging and production only). */
  analytics: { posthogKey: string; posthogHost: string } | null;
  /** Google Tag Manager's container, when the server has one (loaded in staging and production only). */
  tagManager: { gtmId: string } | null;
  /** The support chat to load, when one is configured. */
  supportChat: SupportChatSettings;
};

/** Used until /api/config answers (the server's default). */
export const DEFAULT_SUPPORT_EMAIL = 'support@lockstep.dev';

export function useAppConfig() {
  return useQuery({
    queryKey: ['config'],
    queryFn: () => api<AppConfig>('/api/config'),
    staleTime: Number.POSITIVE_INFINITY,
  });
}

export function useCurrentUser() {
  const { tokenReady } = useSession();
  return useQuery({
    queryKey: ['current-user'],
    queryFn: () => api<CurrentUser>('/rest/users/current'),
    enabled: tokenReady,
  });
}

export function useLimitData() {
  const { tokenReady } = useSession();
  return useQuery({
    queryKey: ['limit-data'],
    queryFn: () => api<LimitData>('/rest/users/limit-data'),
    enabled: tokenReady,
    refetchInterval: LIMIT_DATA_REFRESH_MS,
  });
}

/** Every plan with the limits the server enforces (GET /rest/plans). */
export function usePlans() {
  const { tokenReady } = useSession();
  return useQuery({
    queryKey: ['plans'],
    queryFn: () => api<PlanList>('/rest/plans'),
    enabled: tokenReady,
    staleTime: 5 * 60_000,
  });
}

/** Re-renders when a local dev flag changes in this tab. */
export function useDevFlag(flag: Parameters<typeof readDevFlag>[0]): boolean {
  const [value, setValue] = useState(() => readDevFlag(flag));
  useEffect(() => {
    const update = () => setValue(readDevFlag(flag));
    window.addEventListener('lockstep-dev-flags', update);
    window.addEventListener('storage', update);
    return () => {
      window.removeEventListener('lockstep-dev-flags', update);
      window.removeEventListener('storage', update);
    };
  }, [flag]);
  return value;
}

export type EffectivePlan = { subscription: Subscription; limits: LimitData | null; devPlan: boolean };

/**
 * The plan the UI works with (spec sections 4-6): status none without a user, a subscription or
 * limit data; in local dev mode a missing plan becomes the dev plan.
 */
export function effectivePlan(
  user: CurrentUser | undefined,
  limits: LimitData | undefined,
  skipPaywall: boolean,
): EffectivePlan {
  const none: Subscription = {
    status: 'none',
    daysRemaining: null,
    planDisplayName: NO_PLAN_DISPLAY_NAME,
    productType: null,
  };
  const subscription = user && limits ? user.lockstepUser.subscription : none;
  if (subscription.status === 'none' && skipPaywall) {
    return {
      subscription: {
        status: 'active',
        daysRemaining: DEV_PLAN.daysRemaining,
        planDisplayName: DEV_PLAN.displayName,
        productType: null,
      },
      limits: {
        baseCount: limits?.baseCount ?? 0,
        recordCount: limits?.recordCount ?? 0,
        baseLimit: DEV_PLAN.baseLimit,
        recordLimit: limits && limits.recordLimit > 0 ? limits.recordLimit : DEV_PLAN.fallbackRecordLimit,
      },
      devPlan: true,
    };
  }
  return { subscription, limits: limits ?? null, devPlan: false };
}

export function usePlan(): EffectivePlan & { loading: boolean } {
  const user = useCurrentUser();
  const limits = useLimitData();
  const skip = useDevFlag('skipPaywall');
  return { ...effectivePlan(user.data, limits.data, skip), loading: user.isLoading || limits.isLoading };
}
