import { useEffect } from 'react';
import { isRouteErrorResponse, useLocation, useNavigate, useRouteError } from 'react-router';
import { DEFAULT_SUPPORT_EMAIL, useAppConfig } from '../lib/queries';
import { NotFoundView } from './not-found-view';
import { SomethingWentWrong } from './something-went-wrong';

/**
 * The router's error element: a page that fails to render shows the Something went wrong screen
 * (spec section 8). Try again navigates to the same address, which clears the router's error.
 */
export function RouteErrorScreen() {
  const error = useRouteError();
  const config = useAppConfig();
  const navigate = useNavigate();
  const location = useLocation();
  useEffect(() => console.error('Page render failed', error), [error]);
  if (isRouteErrorResponse(error) && error.status === 404) return <NotFoundView />;
  return (
    <SomethingWentWrong
      supportEmail={config.data?.supportEmail ?? DEFAULT_SUPPORT_EMAIL}
      onRetry={() => navigate(location, { replace: true })}
    />
  );
}
