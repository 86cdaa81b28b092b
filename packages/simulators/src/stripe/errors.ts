/**
 * Stripe's error body: `{error: {type, code?, message, param?, doc_url?, request_log_url}}`.
 * `type` is one of api_error, card_error, idempotency_error, invalid_request_error (the spec's
 * enum); `doc_url` points at the error code's page. The routes add `request_log_url` and the
 * `Request-Id` header.
 */

export type StripeErrorBody = {
  type: 'api_error' | 'card_error' | 'idempotency_error' | 'invalid_request_error';
  message: string;
  code?: string;
  param?: string;
  /** Parameter validation failed before the endpoint ran: no idempotent result is saved. */
  validation?: boolean;
};

export class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly error: StripeErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(error.message);
  }

  /** The JSON body, with doc_url and request_log_url. */
  body(requestId: string, livemode: boolean, nowSeconds: number): { error: Record<string, unknown> } {
    const { validation: _validation, ...rest } = this.error;
    const out: Record<string, unknown> = { ...rest };
    if (rest.code) out.doc_url = `https://stripe.com/docs/error-codes/${rest.code.replace(/_/g, '-')}`;
    out.request_log_url = `https://dashboard.stripe.com/${livemode ? '' : 'test/'}logs/${requestId}?t=${nowSeconds}`;
    return { error: out };
  }
}

const TYPE_NAMES: Record<string, string> = {
  customer: 'customer',
  product: 'product',
  price: 'price',
  coupon: 'coupon',
  subscription: 'subscription',
  invoice: 'invoice',
  event: 'event',
  webhook_endpoint: 'webhook endpoint',
  'checkout.session': 'checkout.session',
  'billing_portal.session': 'billing_portal.session',
};

/** 404 `resource_missing`: "No such customer: 'cus_x'". */
export function noSuch(objectType: string, id: string, param = 'id'): StripeApiError {
  return new StripeApiError(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    message: `No such ${TYPE_NAMES[objectType] ?? objectType}: '${id}'`,
    param,
  });
}

/** A 400 that is not about parameter syntax (business rule). */
export function badRequest(message: string, extra: { code?: string; param?: string } = {}): StripeApiError {
  return new StripeApiError(400, { type: 'invalid_request_error', message, ...extra });
}

/** Keys are shown as Stripe shows them: prefix, asterisks, the last four characters. */
export function redactKey(key: string): string {
  const m = /^((?:sk|rk|pk)_(?:test|live)_)(.*)$/.exec(key);
  if (!m) return key.length > 4 ? `${'*'.repeat(key.length - 4)}${key.slice(-4)}` : key;
  const [, prefix = '', rest = ''] = m;
  return `${prefix}${'*'.repeat(Math.max(0, rest.length - 4))}${rest.slice(-4)}`;
}
