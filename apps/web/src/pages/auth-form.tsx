import {
  Alert,
  Anchor,
  Button,
  Center,
  Paper,
  PasswordInput,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { analytics } from '../lib/analytics';
import { authClient } from '../lib/auth-client';
import { safeRedirect } from '../lib/redirect';
import { tagManager } from '../lib/tag-manager';

/** Sign-in and sign-up share one form; both honour ?redirect_url= (spec section 2). */
export function AuthForm({ mode }: { mode: 'sign-in' | 'sign-up' }) {
  const [params] = useSearchParams();
  const redirect = safeRedirect(params.get('redirect_url'));
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // The address a confirmation link went to: sign-up made no session (verification is on).
  const [checkEmail, setCheckEmail] = useState<string | null>(null);
  const signUp = mode === 'sign-up';

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    // The confirmation link brings the user back to where they were going, signed in.
    const result = signUp
      ? await authClient.signUp.email({ email, password, name: name.trim() || email, callbackURL: redirect })
      : await authClient.signIn.email({ email, password });
    setBusy(false);
    if (result.error) {
      setError(result.error.message ?? 'That did not work. Check your email and password.');
      return;
    }
    if (signUp && result.data?.token === null) {
      setCheckEmail(email);
      return;
    }
    // Tracked once the app knows who signed in (spec section 4).
    analytics.signedIn(signUp ? 'sign_up' : 'email');
    tagManager.signedIn(signUp ? 'sign_up' : 'email');
    window.location.assign(redirect);
  }

  const other = signUp ? '/sign-in' : '/sign-up';
  const otherQuery = params.get('redirect_url') ? `?redirect_url=${encodeURIComponent(redirect)}` : '';
  if (checkEmail) {
    // Said the same whether the address is new or already has an account: sign-up tells no one which.
    return (
      <Center mih="100vh" bg="gray.0">
        <Paper withBorder shadow="sm" p="xl" w={400}>
          <Stack>
            <Title order={2}>Check your email</Title>
            <Text>
              We sent a link to <b>{checkEmail}</b>. Open it to confirm your address and sign in.
            </Text>
            <Text c="dimmed" size="sm">
              No email after a few minutes? Look in your spam folder, or sign in: if the address is not
              confirmed yet, we send a new link.
            </Text>
            <Text size="sm">
              <Anchor component={Link} to={`/sign-in${otherQuery}`}>
                Back to sign in
              </Anchor>
            </Text>
          </Stack>
        </Paper>
      </Center>
    );
  }
  return (
    <Center mih="100vh" bg="gray.0">
      <Paper withBorder shadow="sm" p="xl" w={400} component="form" onSubmit={submit}>
        <Stack>
          <Title order={2}>{signUp ? 'Create your Lockstep account' : 'Sign in to Lockstep'}</Title>
          <Text c="dimmed" size="sm">
            Two-way sync between the apps you keep records in.
          </Text>
          {error ? (
            <Alert color="red" role="alert">
              {error}
            </Alert>
          ) : null}
          {signUp ? (
            <TextInput
              label="Name"
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              autoComplete="name"
            />
          ) : null}
          <TextInput
            label="Email"
            type="email"
            required
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
            autoComplete="email"
          />
          <PasswordInput
            label="Password"
            required
            minLength={8}
            description={signUp ? 'At least 8 characters.' : undefined}
            value={password}
            onChange={(e) => setPassword(e.currentTarget.value)}
            autoComplete={signUp ? 'new-password' : 'current-password'}
          />
          <Button type="submit" loading={busy}>
            {signUp ? 'Sign up' : 'Sign in'}
          </Button>
          <Text size="sm">
            {signUp ? 'Already have an account? ' : 'New to Lockstep? '}
            <Anchor component={Link} to={`${other}${otherQuery}`}>
              {signUp ? 'Sign in' : 'Create an account'}
            </Anchor>
          </Text>
        </Stack>
      </Paper>
    </Center>
  );
}

export function SignInPage() {
  return <AuthForm mode="sign-in" />;
}

export function SignUpPage() {
  return <AuthForm mode="sign-up" />;
}
