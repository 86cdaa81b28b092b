import { type AppContext, principalOf, type RestApp } from '../../http/context';
import { openPortal } from '../../services/billing';
import { PaymentUrl } from './create-checkout';

/** POST /payment/portal (spec section 7): Stripe's billing portal for the user's customer. */
export function openBillingPortal(app: RestApp, ctx: AppContext) {
  app.post(
    '/portal',
    {
      schema: {
        tags: ['payment'],
        summary: "Open Stripe's billing portal (change plan, card, cancel); answers its url",
        response: { 200: PaymentUrl },
      },
    },
    async (request) => openPortal(ctx, principalOf(request).userId),
  );
}
