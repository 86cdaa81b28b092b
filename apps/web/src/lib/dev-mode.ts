/**
 * Local dev flags (spec section 6), kept in localStorage. Skipping the paywall is on by default on
 * localhost; the other two are off unless set.
 */
export const DEV_FLAGS = {
  skipPaywall: 'lockstep.dev.skipPaywall',
  invisibleDevToolbox: 'lockstep.dev.invisibleDevToolbox',
  allowUnsupportedMappings: 'lockstep.dev.allowUnsupportedMappings',
} as const;
export type DevFlag = keyof typeof DEV_FLAGS;

const LOCAL_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

export function readDevFlag(flag: DevFlag, hostname = window.location.hostname): boolean {
  const stored = localStorage.getItem(DEV_FLAGS[flag]);
  if (stored === 'true') return true;
  if (stored === 'false') return false;
  return flag === 'skipPaywall' ? LOCAL_HOSTS.includes(hostname) : false;
}

export function writeDevFlag(flag: DevFlag, value: boolean) {
  localStorage.setItem(DEV_FLAGS[flag], String(value));
  window.dispatchEvent(new Event('lockstep-dev-flags'));
}
