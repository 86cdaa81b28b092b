import { Center, Loader } from '@mantine/core';

export function FullWindowLoader() {
  return (
    <Center h="100vh" w="100vw" aria-busy="true">
      <Loader size="lg" aria-label="Loading" />
    </Center>
  );
}
