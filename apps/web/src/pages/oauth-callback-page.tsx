import { Button, Center, Loader, Stack, Text, Title } from '@mantine/core';
import { useEffect, useState } from 'react';
import { Link, useLocation } from 'react-router';
import { ErrorAlert } from '../components/error-alert';
import { finishOAuth, readOAuthAnswer } from '../lib/oauth';

/**
 * /oauth/{connectorType}/callback: where an app sends the sign-in popup back. In a popup it hands
 * the answer to the window that opened it and closes; opened on its own (pop-ups blocked), it
 * finishes the sign-in itself.
 */
export function OAuthCallbackPage() {
  const { search } = useLocation();
  const [state, setState] = useState<{ done: boolean; error: unknown }>({ done: false, error: null });
  useEffect(() => {
    const answer = readOAuthAnswer(search);
    if (window.opener && window.opener !== window) {
      window.opener.postMessage({ type: 'lockstep-oauth', answer }, window.location.origin);
      window.close();
      return;
    }
    finishOAuth(answer).then(
      () => setState({ done: true, error: null }),
      (error) => setState({ done: true, error }),
    );
  }, [search]);
  return (
    <Center h="100vh">
      <Stack align="center" maw={480}>
        {!state.done ? (
          <>
            <Loader aria-label="Finishing the sign-in" />
            <Text>Finishing the sign-in…</Text>
          </>
        ) : state.error ? (
          <ErrorAlert error={state.error} title="The sign-in did not complete" />
        ) : (
          <>
            <Title order={3}>Connected</Title>
            <Text c="dimmed">The connection is saved; choose it when you set up a sync.</Text>
          </>
        )}
        {state.done ? (
          <Button component={Link} to="/syncs">
            Back to your syncs
          </Button>
        ) : null}
      </Stack>
    </Center>
  );
}
