import { Button } from '@mantine/core';

export function ReadDocsButton({ href = '/api/docs' }: { href?: string }) {
  return (
    <Button component="a" href={href} target="_blank" rel="noreferrer" variant="default">
      Read docs
    </Button>
  );
}
