import { ApiError, api } from './api';

/** Leaving the app for Stripe's pages (a seam the tests replace). */
export const browser = {
  goTo(url: string) {
    window.location.assign(url);
  },
};

/** The server answers 503 payments_not_configured when Stripe is not set up on it. */
export function isPaymentsNotSetUp(error: unknown): boolean {
  if (!(error instanceof ApiError) || error.status !== 503) return false;
  const body = error.body as { response?: { code?: unknown } } | null;
  return body?.response?.code === 'payments_not_configured';
}

/** Rewardful's referral id of this visitor, when its script found one. */
export function rewardfulReferral(): string | undefined {
  const referral = (window as { Rewardful?: { referral?: unknown } }).Rewardful?.referral;
  return typeof referral === 'string' && referral !== '' ? referral : undefined;
}

/** POST /payment/checkout/{productType}: the url of Stripe Checkout for the plan. */
export function startCheckout(productType: string) {
  const referral = rewardfulReferral();
  return api<{ url: string }>(`/payment/checkout/${encodeURIComponent(productType)}`, {
    method: 'POST',
    body: referral ? { rewardfulReferral: referral } : {},
  });
}

/** POST /payment/portal: the url of Stripe's billing portal for the signed-in user. */
export function openBillingPortal() {
  return api<{ url: string }>('/payment/portal', { method: 'POST' });
}
