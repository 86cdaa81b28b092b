import { Navigate, Outlet, useLocation } from 'react-router';
import { useSession } from '../lib/session';
import { FullWindowLoader } from './full-window-loader';

/** Signed-in routes: sign in first, and render only after the first API token (spec section 2). */
export function RequireAuth() {
  const { checked, signedIn, tokenReady } = useSession();
  const location = useLocation();
  if (!checked) return <FullWindowLoader />;
  if (!signedIn) {
    const redirect = encodeURIComponent(location.pathname + location.search);
    return <Navigate to={`/sign-in?redirect_url=${redirect}`} replace />;
  }
  if (!tokenReady) return <FullWindowLoader />;
  return <Outlet />;
}
