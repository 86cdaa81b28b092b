import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as zxcvbnCommon from '@zxcvbn-ts/language-common';
import * as zxcvbnEn from '@zxcvbn-ts/language-en';

/** zxcvbn's 0-4 score a password needs: 3 is "safely unguessable" (about 10^8 guesses and more). */
export const MIN_PASSWORD_SCORE = 3;

let estimator: ZxcvbnFactory | undefined;

/** Built on first use: the dictionaries (common passwords, English words and names) are large. */
function zxcvbn(): ZxcvbnFactory {
  estimator ??= new ZxcvbnFactory({
    dictionary: { ...zxcvbnCommon.dictionary, ...zxcvbnEn.dictionary },
    graphs: zxcvbnCommon.adjacencyGraphs,
    translations: zxcvbnEn.translations,
  });
  return estimator;
}

/**
 * Why a password is too weak, as a sentence for the user, or null when it is strong enough. The
 * user's own email and name count as known words (a password made of them is easy to guess).
 * Only the first 128 characters are estimated (the longest password allowed; zxcvbn slows on more).
 */
export function weakPasswordReason(
  password: string,
  userInputs: Array<string | null | undefined> = [],
): string | null {
  const inputs = userInputs
    .filter((s): s is string => typeof s === 'string' && s.trim() !== '')
    .flatMap((s) => [s, ...s.split(/[@.\s_-]+/).filter((part) => part.length >= 3)]);
  const result = zxcvbn().check(password.slice(0, 128), inputs);
  if (result.score >= MIN_PASSWORD_SCORE) return null;
  const warning = result.feedback.warning?.trim();
  const why = warning ? ` ${warning.endsWith('.') ? warning : `${warning}.`}` : '';
  const suggestions = result.feedback.suggestions.map((s) => s.trim()).filter(Boolean);
  return [
    `This password is too easy to guess.${why}`,
    ...suggestions,
    'Choose a longer password, for example three or four unrelated words, that is not a common password and does not contain your name or email.',
  ].join(' ');
}
