import { describe, expect, it } from 'vitest';
import { GENERIC_ERROR_TEXT, userFacingText } from './errors';

const base = { statusCode: 400, timestamp: '2026-01-01T00:00:00.000Z', path: '/rest/x' };

describe('userFacingText (spec section 8)', () => {
  it('prefers the user-facing message', () => {
    expect(userFacingText({ ...base, message: 'm', response: { userFacingMessage: 'Fix the name.' } })).toBe(
      'Fix the name.',
    );
  });
  it('joins a list with blank lines', () => {
    expect(userFacingText({ ...base, message: 'm', response: { userFacingMessage: ['One.', 'Two.'] } })).toBe(
      'One.\n\nTwo.',
    );
  });
  it('falls back to the message, then the generic text', () => {
    expect(userFacingText({ ...base, message: 'Bad thing', response: {} })).toBe('Bad thing');
    expect(userFacingText({ ...base, message: '', response: {} })).toBe(GENERIC_ERROR_TEXT);
    expect(userFacingText('not json')).toBe(GENERIC_ERROR_TEXT);
    expect(userFacingText(null)).toBe(GENERIC_ERROR_TEXT);
  });
});
