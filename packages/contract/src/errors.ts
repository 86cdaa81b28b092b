import { z } from 'zod';

/** The error envelope of spec section 3: every non-2xx answer of the API has this shape. */
export const ErrorEnvelope = z.object({
  statusCode: z.number().int(),
  timestamp: z.string(),
  path: z.string(),
  message: z.string(),
  response: z.object({
    userFacingMessage: z.union([z.string(), z.array(z.string())]).optional(),
    code: z.string().optional(),
  }),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

/** Fallback text of spec section 8 when neither a user-facing message nor a message is present. */
export const GENERIC_ERROR_TEXT = 'An error occured. Please contact support.';

/**
 * The text a user sees for a backend error (spec section 8): the user-facing message (a list is
 * joined with blank lines), else the envelope's message, else the generic text.
 */
export function userFacingText(body: unknown): string {
  const parsed = ErrorEnvelope.partial().safeParse(body);
  if (!parsed.success) return GENERIC_ERROR_TEXT;
  const ufm = parsed.data.response?.userFacingMessage;
  if (Array.isArray(ufm) && ufm.length > 0) return ufm.join('\n\n');
  if (typeof ufm === 'string' && ufm.trim() !== '') return ufm;
  if (parsed.data.message && parsed.data.message.trim() !== '') return parsed.data.message;
  return GENERIC_ERROR_TEXT;
}
