/**
 * Analytics run only in staging and production (spec section 9), and never identify a user while
 * staff impersonate them (spec section 6). No vendor is wired yet: this is the one place to add it.
 */
type Env = 'local' | 'test' | 'staging' | 'production';
let environment: Env = 'local';
let impersonating = false;
const enabled = () => environment === 'staging' || environment === 'production';

export const analytics = {
  configure(env: Env, isImpersonating: boolean) {
    environment = env;
    impersonating = isImpersonating;
  },
  identify(userId: string) {
    if (!enabled() || impersonating) return;
    console.debug('analytics identify', userId);
  },
  track(event: string) {
    if (!enabled()) return;
    console.debug('analytics track', event);
  },
  reset() {
    if (!enabled()) return;
    console.debug('analytics reset');
  },
};
