import { AbsoluteUrl } from '@lockstep/contract';
import { z } from 'zod';
import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { startCheckout } from '../../services/billing';

export const CheckoutBody = z.strictObject({
  /** Rewardful's referral id of the visitor, when there is one; kept on the Checkout Session. */
  rewardfulReferral: z.string().max(200).optional(),
});

export const PaymentUrl = z.object({ url: AbsoluteUrl });

/** POST /payment/checkout/{productType} (spec section 7): Stripe Checkout for a plan. */
export function createCheckout(app: RestApp, ctx: AppContext) {
  app.post(
    '/checkout/:productType',
    {
      schema: {
        tags: ['payment'],
        summary: "Start Stripe Checkout for a plan; answers the hosted page's url",
        params: z.object({ productType: z.string().min(1).max(40) }),
        // The web app posts {} or no body at all.
        body: CheckoutBody.optional(),
        response: { 200: PaymentUrl },
      },
    },
    async (request) => {
      const { userId } = principalOf(request);
      return startCheckout(ctx, userId, request.params.productType, request.body?.rewardfulReferral);
    },
  );
}
