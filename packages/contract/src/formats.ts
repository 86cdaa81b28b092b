import { z } from 'zod';

/**
 * Formats of the fields the server fills in itself, for the OpenAPI document: ids the database makes
 * (uuid columns) and timestamps written with toISOString(). They are declared as metadata, not as
 * run-time checks: an input stays as lenient as before (an unknown id is a 404, not a 400), and an
 * answer is not re-validated on its way out. Inputs that are checked carry `.uuid()` /
 * `z.iso.datetime()` themselves. The contract test checks real answers against these formats.
 */
export const Uuid = z.string().meta({ format: 'uuid' });
export const IsoTimestamp = z.string().meta({ format: 'date-time' });
export const IsoDate = z.string().meta({ format: 'date' });
export const EmailAddress = z.string().meta({ format: 'email' });
export const AbsoluteUrl = z.string().meta({ format: 'uri' });
